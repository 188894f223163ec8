package org.jameskvs.app.e2e;

import org.junit.jupiter.api.Test;

/**
 * The in-memory baseline ({@code -Dkvs.queue=memory}) starts from this app's lib and relays every mail
 * exactly once. The ActiveMQ baseline's test is in james-kvs-bench, whose lib holds ActiveMQ.
 */
class BaselineQueuesE2ETest {

    @Test
    void memoryQueueRelaysEveryMailExactlyOnce() throws Exception {
        BaselineRelay.relaysEveryMailExactlyOnce("memory");
    }
}
