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
 * half of the 3.8 s their pacing takes (a lower bound: a loaded machine only makes it longer).
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
}
