package org.jameskvs.james.contract;

import org.apache.james.queue.api.DelayedManageableMailQueueContract;
import org.apache.james.queue.api.DelayedPriorityMailQueueContract;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueMetricContract;
import org.apache.james.queue.api.MailQueueMetricExtension;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.PriorityManageableMailQueueContract;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.queue.KvsMailQueue;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * James's queue contracts (MailQueue, Manageable, Delayed, DelayedManageable, Priority,
 * DelayedPriority, PriorityManageable, Metric) against one KvsMailQueue per test.
 */
class KvsMailQueueContractTest implements DelayedManageableMailQueueContract, DelayedPriorityMailQueueContract,
    PriorityManageableMailQueueContract, MailQueueMetricContract {

    private KvsQueues queues;
    private KvsMailQueueFactory factory;
    private KvsMailQueue queue;

    @BeforeEach
    void setUp(MailQueueMetricExtension.MailQueueMetricTestSystem metrics) {
        queues = KvsBackend.freshNamespace();
        factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
            metrics.getMetricFactory(), metrics.getSpyGaugeRegistry());
        queue = factory.createQueue(MailQueueName.of("spool"));
    }

    @AfterEach
    void tearDown() {
        factory.stop();
        queues.close();
    }

    @Override
    public MailQueue getMailQueue() {
        return queue;
    }

    @Override
    public ManageableMailQueue getManageableMailQueue() {
        return queue;
    }
}
