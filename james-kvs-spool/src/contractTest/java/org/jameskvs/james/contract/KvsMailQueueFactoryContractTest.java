package org.jameskvs.james.contract;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueFactoryContract;
import org.apache.james.queue.api.ManageableMailQueueFactoryContract;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.queue.KvsMailQueue;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

class KvsMailQueueFactoryContractTest implements MailQueueFactoryContract<KvsMailQueue>,
    ManageableMailQueueFactoryContract<KvsMailQueue> {

    private KvsQueues queues;
    private KvsMailQueueFactory factory;

    @BeforeEach
    void setUp() {
        queues = KvsBackend.freshNamespace();
        factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
            new RecordingMetricFactory(), new NoopGaugeRegistry());
    }

    @AfterEach
    void tearDown() {
        factory.stop();
        queues.close();
    }

    @Override
    public MailQueueFactory<KvsMailQueue> getMailQueueFactory() {
        return factory;
    }
}
