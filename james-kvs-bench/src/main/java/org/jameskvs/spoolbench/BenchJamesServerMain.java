package org.jameskvs.spoolbench;

import java.util.List;
import java.util.Locale;

import org.jameskvs.app.KvsMemoryJamesServerMain;
import org.jameskvs.app.QueueChoice;

/**
 * The James that {@code bin/benchmark} measures: {@link KvsMemoryJamesServerMain} (queue {@code kvs}
 * or {@code memory}), plus {@code -Dkvs.queue=activemq} for James's stock ActiveMQ queue, the durable
 * baseline, which this module adds so that ActiveMQ's jars stay out of the app's lib/. Run from
 * {@code james-kvs-bench/target/bench/lib} (the app's jars plus ActiveMQ, the charts and the SMTP tools).
 */
public final class BenchJamesServerMain {
    static final String ACTIVEMQ = "activemq";

    private BenchJamesServerMain() {
    }

    public static void main(String[] args) throws Exception {
        String queue = System.getProperty(QueueChoice.PROPERTY, "").trim().toLowerCase(Locale.ROOT);
        if (queue.equals(ACTIVEMQ)) {
            KvsMemoryJamesServerMain.start(ACTIVEMQ, List.of(new ActiveMQBaselineQueueModule()), args);
        } else {
            KvsMemoryJamesServerMain.main(args);
        }
    }
}
