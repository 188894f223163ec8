package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * A reply rule with {@code action=throttle}: two replies saying "slow down" cap the lane's rate at 5
 * mails/s (the lane had no rate limit) for an hour; the domain then accepts, and its next mails go out
 * paced. Asserted: the lane's view shows the throttle, and 20 paced mails cannot arrive in less than
 * half of the 3.8 s their pacing takes (a lower bound: a loaded machine only makes it longer). In a
 * bucket the throttle is the tail domain's alone: its neighbour's mail, queued behind the throttled
 * domain's, is not paced.
 */
class ThrottleRuleTest {

    @Test
    void aThrottlingReplyRulePacesTheLane() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("slow.test", Behaviour.rcptReply("451 4.7.0 slow down, you send too fast"));
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", "slow.test", "buckets", "1",
                "concurrency", "4", "initialConcurrency", "4", "port", String.valueOf(target.port()),
                "retryDelays", "100", "maxAttempts", "1000",
                "replyRule1", "text=slow down; action=throttle; maxMessageRate=5; suspendAfterFailures=2; throttleForMillis=3600000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, registry)) {
                LaneState lane = registry.find("slow.test").orElseThrow();
                assertThat(LaneView.of(lane).throttledRate()).isZero();
                spool.enqueue(TestMails.mail("first", TestMails.messageId("first", 0), "r@slow.test"));
                await(() -> LaneView.of(lane).throttledRate() == 5.0, "the lane throttled by the rule");
                LaneView view = LaneView.of(lane);
                assertThat(view.throttledUntil()).isNotNull();
                assertThat(view.suspended()).as("throttled, not suspended").isFalse();

                target.domain("slow.test").behave(Behaviour.accept());
                await(() -> target.domain("slow.test").distinctMessageIds() == 1, "the first mail delivered");
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("paced" + i, TestMails.messageId("paced", i), "r" + i + "@slow.test"));
                }
                await(() -> target.domain("slow.test").distinctMessageIds() == 21, "20 more delivered");
                List<Long> arrivals = new ArrayList<>();
                target.domain("slow.test").arrivals().forEach((id, at) -> {
                    if (id.startsWith("<paced-")) {
                        arrivals.add(at);
                    }
                });
                arrivals.sort(Long::compare);
                double seconds = (arrivals.get(19) - arrivals.get(0)) / 1000.0;
                System.out.printf("ThrottleRuleTest: 20 mails in %.2f s (%.2f mails/s) under a 5/s throttle%n", seconds, 19 / seconds);
                assertThat(seconds).as("20 mails paced at 5/s take 3.8 s from first to last").isGreaterThanOrEqualTo(1.9);
            }
        }
    }

    /**
     * A bucket with two tail domains; slow.test is throttled at one mail per 10 s. Then 10 mails to
     * slow.test and, behind them in the bucket's queue, 20 to its neighbour fast.test. Asserted (events,
     * no clock): every neighbour mail arrives while slow.test has had at most 2 of its paced mails (the
     * first at once, the second 10 s later), so they were not paced with it; slow.test's are (it has not
     * had them all). Were the bucket paced, the neighbour's 20 mails would take over 200 s.
     */
    @Test
    void aThrottledTailDomainDoesNotSlowItsBucketNeighbour() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("slow.test", Behaviour.rcptReply("451 4.7.0 slow down, you send too fast"));
        behaviours.put("fast.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("buckets", "1",
                "concurrency", "4", "initialConcurrency", "4", "port", String.valueOf(target.port()),
                "retryDelays", "100", "maxAttempts", "1000",
                "replyRule1", "text=slow down; action=throttle; maxMessageRate=0.1; suspendAfterFailures=2; throttleForMillis=3600000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, registry)) {
                LaneState bucket = registry.find("slow.test").orElseThrow();
                assertThat(bucket.lane().dedicated()).isFalse();
                assertThat(registry.find("fast.test").orElseThrow().lane()).isEqualTo(bucket.lane());
                spool.enqueue(TestMails.mail("first", TestMails.messageId("first", 0), "r@slow.test"));
                await(() -> LaneView.of(bucket).throttledDomains().containsKey("slow.test"), "slow.test throttled by the rule");
                LaneView view = LaneView.of(bucket);
                assertThat(view.throttledRate()).as("the bucket itself is not throttled").isZero();
                assertThat(view.suspended()).as("throttled, not suspended").isFalse();

                target.domain("slow.test").behave(Behaviour.accept());
                await(() -> target.domain("slow.test").distinctMessageIds() == 1, "the first mail delivered");
                for (int i = 0; i < 10; i++) {
                    spool.enqueue(TestMails.mail("paced" + i, TestMails.messageId("paced", i), "r" + i + "@slow.test"));
                }
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("neighbour" + i, TestMails.messageId("neighbour", i), "r" + i + "@fast.test"));
                }
                await(() -> target.domain("fast.test").distinctMessageIds() == 20, "the neighbour's 20 mails delivered");
                int slowPaced = target.domain("slow.test").distinctMessageIds() - 1;
                System.out.printf("ThrottleRuleTest: the neighbour's 20 mails arrived while slow.test (0.1/s) had %d of its 10%n", slowPaced);
                assertThat(slowPaced).as("slow.test's paced mails arrived by the time its neighbour's 20 did").isLessThanOrEqualTo(2);
            }
        }
    }
}
