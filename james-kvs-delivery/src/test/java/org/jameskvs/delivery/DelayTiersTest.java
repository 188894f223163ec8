package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * Retries wait in the delay tier queues (one FIFO per retry delay), never as a delayed enqueue in a
 * lane queue, and come back to their lane when due: mails refused twice arrive once when the
 * destination accepts again.
 */
class DelayTiersTest {

    @Test
    void retriesGoThroughTheTierOfTheirDelayAndComeBack() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("flaky.test", Behaviour.refuse421());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("buckets", "2", "port", String.valueOf(target.port()),
                "retryDelays", "100,200", "maxAttempts", "100", "suspendAfterFailures", "1000000");
            RecordingQueueFactory queues = new RecordingQueueFactory(TestSpools.memoryQueues());
            int mails = 20;
            try (LaneSpool spool = TestSpools.start(config, queues, target, (mail, reply) -> { throw new AssertionError("bounced " + mail.getName()); }, new LaneRegistry())) {
                Set<String> ids = new HashSet<>();
                for (int i = 0; i < mails; i++) {
                    ids.add(TestMails.messageId("flaky", i));
                    spool.enqueue(TestMails.mail("flaky-" + i, TestMails.messageId("flaky", i), "r" + i + "@flaky.test"));
                }
                await(() -> queues.enqueues(DelayTiers.tierName(config, 1)) >= 2L * mails, "every mail refused three times");
                target.domain("flaky.test").behave(Behaviour.accept());
                await(() -> target.domain("flaky.test").messageIds().containsAll(ids), "every mail delivered");

                assertThat(target.domain("flaky.test").accepted()).as("delivered once each").isEqualTo(mails);
                assertThat(queues.enqueues(DelayTiers.tierName(config, 0))).as("first retries, in tier 0").isEqualTo(mails);
                assertThat(queues.delayedEnqueues.get()).as("delayed enqueues into any queue").isZero();
            }
        }
    }
}
