package org.jameskvs.app.e2e;

import java.lang.management.ManagementFactory;
import java.util.Properties;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.dropwizard.DropWizardMetricFactory;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.jameskvs.testkit.KvsServerProcess;

import com.codahale.metrics.MetricRegistry;

/**
 * KVS mail queues in this JVM (James's KvsMailQueueFactory over this JVM's KVS client) on a real KVS
 * server process: what the in-JVM lane tests give LaneSpool in place of a James. Closes the factory,
 * the queues and the client.
 */
final class KvsLaneQueues implements AutoCloseable {
    private final KvsClientOpener opener;
    private final KvsQueues queues;
    private final KvsMailQueueFactory factory;

    private KvsLaneQueues(KvsClientOpener opener, KvsQueues queues, KvsMailQueueFactory factory) {
        this.opener = opener;
        this.queues = queues;
        this.factory = factory;
    }

    static KvsLaneQueues connect(KvsServerProcess kvs, String nodeId) {
        Properties properties = new Properties();
        properties.setProperty("servers", kvs.address());
        properties.setProperty("password", KvsServerProcess.PASSWORD);
        properties.setProperty("nodeId", nodeId);
        KvsSpoolConfiguration spoolConfig = KvsSpoolConfiguration.from(properties);
        KvsClientOpener opener = KvsClientOpener.connect(spoolConfig);
        KvsQueues queues = new KvsQueues(opener, spoolConfig);
        KvsMailQueueFactory factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
            new DropWizardMetricFactory(new MetricRegistry()), new NoopGaugeRegistry());
        return new KvsLaneQueues(opener, queues, factory);
    }

    KvsMailQueueFactory factory() {
        return factory;
    }

    /** This JVM's used heap after full collections (settled: the least of a few). */
    static long liveHeap() throws InterruptedException {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(200);
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    @Override
    public void close() throws Exception {
        try {
            factory.stop();
        } finally {
            try (opener; queues) {
                // closed in reverse order: the queues, then the client
            }
        }
    }
}
