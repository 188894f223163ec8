package org.jameskvs.app.e2e;

import org.junit.jupiter.api.Test;

/**
 * The ActiveMQ baseline of the spool benchmark: James from this module's lib (the app's jars plus
 * ActiveMQ) with BenchJamesServerMain and {@code -Dkvs.queue=activemq} starts and relays every mail
 * exactly once. In james-kvs-app's e2e package, whose BaselineRelay (test-jar) is package-private.
 */
class ActiveMqBaselineE2ETest {

    @Test
    void activeMqQueueRelaysEveryMailExactlyOnce() throws Exception {
        BaselineRelay.relaysEveryMailExactlyOnce("activemq");
    }
}
