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
 * Tail domains share a bucket; one of them answering 421 is suspended on its own: its mails are parked
 * in a delay queue, the bucket stays open and its other domains get all their mail. After an
 * administrator resumes the domain its parked mails come back and arrive once.
 */
class BucketDomainSuspensionTest {

    @Test
    void aFailingTailDomainIsSuspendedAloneInItsBucket() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("bad.test", Behaviour.refuse421());
        for (int i = 0; i < 4; i++) {
            behaviours.put("good" + i + ".test", Behaviour.accept());
        }
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("buckets", "1", "concurrency", "2",
                "port", String.valueOf(target.port()), "retryDelays", "100,500", "maxAttempts", "1000",
                "suspendAfterFailures", "3", "suspendForMillis", "3600000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, registry)) {
                Set<String> badIds = new HashSet<>();
                for (int i = 0; i < 20; i++) {
                    badIds.add(TestMails.messageId("bad", i));
                    spool.enqueue(TestMails.mail("bad" + i, TestMails.messageId("bad", i), "r" + i + "@bad.test"));
                }
                LaneState bucket = registry.find("bad.test").orElseThrow();
                assertThat(bucket.lane().dedicated()).isFalse();
                await(() -> bucket.suspendedDomains().containsKey("bad.test"), "bad.test suspended");
                long badConnections = target.domain("bad.test").connections();

                Map<String, Set<String>> expected = new LinkedHashMap<>();
                for (int d = 0; d < 4; d++) {
                    String domain = "good" + d + ".test";
                    for (int i = 0; i < 20; i++) {
                        expected.computeIfAbsent(domain, k -> new HashSet<>()).add(TestMails.messageId(domain, i));
                        spool.enqueue(TestMails.mail(domain + i, TestMails.messageId(domain, i), "r" + i + "@" + domain));
                    }
                }
                await(() -> expected.entrySet().stream().allMatch(e -> target.domain(e.getKey()).messageIds().containsAll(e.getValue())),
                    "the bucket's other domains delivered");
                assertThat(bucket.suspension().suspendedUntil()).as("the bucket itself").isNull();
                assertThat(target.domain("bad.test").accepted()).isZero();
                // at most the deliveries already under way when the suspension began
                assertThat(target.domain("bad.test").connections()).isLessThanOrEqualTo(badConnections + 1);
                assertThat(LaneView.of(bucket).suspendedDomains()).containsOnlyKeys("bad.test");

                target.domain("bad.test").behave(Behaviour.accept());
                registry.suspensionFor("bad.test").orElseThrow().resume();
                await(() -> target.domain("bad.test").messageIds().containsAll(badIds), "bad.test's parked mails delivered");
                assertThat(target.domain("bad.test").accepted()).isEqualTo(20);
            }
        }
    }
}
