package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.james.server.core.MailImpl;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * Tail domains sharing one bucket each have their own counts: queued while the bucket is suspended,
 * delayed once refused temporarily, in flight during a slow delivery, forgotten once their mail is
 * gone; the bucket's counts stay the sum. A lane name and a dedicated domain have none. At the bound,
 * a domain not yet counted is not counted, and its answer says so.
 */
class TailDomainCountsTest {

    @Test
    void eachTailDomainOfABucketHasItsOwnQueuedDelayedAndInFlightCounts() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("slow.test", Behaviour.slowData(Duration.ofSeconds(3)));
        behaviours.put("later.test", Behaviour.rcptReply("451 4.3.0 try again later"));
        behaviours.put("own.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", "own.test", "buckets", "1",
                "concurrency", "1", "initialConcurrency", "1", "port", String.valueOf(target.port()),
                "retryDelays", "3600000", "maxAttempts", "10");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, registry)) {
                LaneState bucket = registry.find("slow.test").orElseThrow();
                assertThat(bucket.lane().dedicated()).isFalse();
                assertThat(registry.find("later.test").orElseThrow().lane()).isEqualTo(bucket.lane());
                bucket.suspension().suspend(Duration.ofHours(1), "held for the test");
                enqueue(spool, "slow", "slow.test", 2);
                enqueue(spool, "later", "later.test", 3);

                await(() -> own(registry, "slow.test").queued() == 2 && own(registry, "later.test").queued() == 3,
                    "each domain's own queued count");
                assertThat(own(registry, "slow.test")).isEqualTo(new TailDomainCounts.View("slow.test", true, 2, 0, 0, null));
                // The bucket's count is its queue's size (James's memory queue here), read at another
                // moment than the domains' counts: wait for it too (a clean-clone run once read 9).
                await(() -> LaneView.of(bucket).queued() == 5, "the bucket's queued count, the sum of its domains'");
                assertThat(registry.tailDomain(bucket.lane().name())).as("a lane name").isEmpty();
                assertThat(registry.tailDomain("own.test")).as("a dedicated domain").isEmpty();
                assertThat(own(registry, "none.test")).isEqualTo(new TailDomainCounts.View("none.test", true, 0, 0, 0, null));

                bucket.suspension().resume();
                await(() -> own(registry, "slow.test").inFlight() == 1, "a slow delivery in flight");
                await(() -> own(registry, "later.test").delayed() == 3 && own(registry, "later.test").queued() == 0,
                    "later.test's mails delayed after its 451");
                await(() -> target.domain("slow.test").accepted() == 2 && own(registry, "slow.test").queued() == 0
                    && own(registry, "slow.test").inFlight() == 0, "slow.test's mail delivered, its counts back to 0");
                assertThat(spool.tailCounts().domains()).as("slow.test forgotten, later.test still counted").isEqualTo(1);
            }
        }
    }

    @Test
    void atTheBoundANewDomainIsNotCountedAndItsAnswerSaysSo() throws Exception {
        TailDomainCounts counts = new TailDomainCounts(2);
        MailImpl a = TestMails.mail("a", TestMails.messageId("a", 0), "r@a.test");
        MailImpl b = TestMails.mail("b", TestMails.messageId("b", 0), "r@b.test");
        MailImpl c = TestMails.mail("c", TestMails.messageId("c", 0), "r@c.test");
        assertThat(counts.enqueuing("a.test", a)).isTrue();
        assertThat(counts.enqueuing("b.test", b)).isTrue();
        assertThat(counts.enqueuing("c.test", c)).isFalse();
        TailDomainCounts.View notCounted = counts.view("c.test");
        assertThat(notCounted.counted()).isFalse();
        assertThat(notCounted.note()).contains("at most 2").contains("1 mails not counted");
        counts.leftLane(c); // not counted: changes nothing
        counts.leftLane(a);
        assertThat(counts.domains()).isEqualTo(1);
        assertThat(counts.enqueuing("c.test", c)).isTrue();
        assertThat(counts.view("c.test").queued()).isEqualTo(1);
        assertThat(counts.view("b.test").queued()).isEqualTo(1);

        TailDomainCounts otherNode = new TailDomainCounts(2);
        otherNode.enqueuing("b.test", TestMails.mail("b2", TestMails.messageId("b", 1), "r@b.test"));
        otherNode.leftLane(b); // counted by the first node, not this one
        assertThat(otherNode.view("b.test").queued()).isEqualTo(1);
    }

    private static TailDomainCounts.View own(LaneRegistry registry, String domain) {
        return registry.tailDomain(domain).orElseThrow();
    }

    private static void enqueue(LaneSpool spool, String tag, String domain, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            spool.enqueue(TestMails.mail(tag + i, TestMails.messageId(tag, i), "r" + i + "@" + domain));
        }
    }
}
