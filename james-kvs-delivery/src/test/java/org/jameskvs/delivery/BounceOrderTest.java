package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.mailet.Mail;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * An administrator orders a suspended destination's mail bounced: the mail held by the lane and the
 * mail still queued go to the bounce path, none is delivered, the lane queue empties; when the order is
 * cancelled new mail is delivered again.
 */
class BounceOrderTest {

    @Test
    void orderedBouncesEmptyASuspendedLane() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("dead.test", Behaviour.refuse421());
        List<Mail> bounced = new CopyOnWriteArrayList<>();
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", "dead.test", "buckets", "1",
                "concurrency", "2", "port", String.valueOf(target.port()), "retryDelays", "100", "maxAttempts", "1000",
                "suspendAfterFailures", "2", "suspendForMillis", "3600000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> bounced.add(mail), registry)) {
                for (int i = 0; i < 30; i++) {
                    spool.enqueue(TestMails.mail("dead" + i, TestMails.messageId("dead", i), "r" + i + "@dead.test"));
                }
                LaneState lane = registry.find("dead.test").orElseThrow();
                await(() -> lane.suspension().suspendedUntil() != null && lane.stats().held() > 0, "suspended, mail held");
                assertThat(bounced).isEmpty();

                lane.bounces().order("dead.test", Duration.ofHours(1));
                await(() -> bounced.size() == 30, "every mail bounced");
                assertThat(bounced).allSatisfy(m -> assertThat(m.getErrorMessage()).contains("administrator's order"));
                assertThat(target.domain("dead.test").accepted()).isZero();
                assertThat(LaneView.of(lane).bounceOrders()).containsOnlyKeys("dead.test");

                lane.bounces().cancel("dead.test");
                lane.suspension().resume();
                target.domain("dead.test").behave(Behaviour.accept());
                spool.enqueue(TestMails.mail("alive", TestMails.messageId("alive", 0), "r@dead.test"));
                await(() -> target.domain("dead.test").accepted() == 1, "delivered after the order was cancelled");
                assertThat(bounced).hasSize(30);
            }
        }
    }

    /**
     * A reply rule with {@code action=bounce}: two replies whose text matches order the domain's mail
     * bounced, the queued and the retried mail alike, none delivered; another domain of the same bucket
     * is not affected.
     */
    @Test
    void aBouncingReplyRuleOrdersTheDomainsMailBounced() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("blocked.test", Behaviour.rcptReply("451 4.7.1 you are blocked, try later"));
        behaviours.put("fine.test", Behaviour.accept());
        List<Mail> bounced = new CopyOnWriteArrayList<>();
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("buckets", "1", "concurrency", "2",
                "port", String.valueOf(target.port()), "retryDelays", "100", "maxAttempts", "1000",
                "replyRule1", "code=4xx; text=\\bblocked\\b; action=bounce; suspendAfterFailures=2; bounceForMillis=3600000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> bounced.add(mail), registry)) {
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("blocked" + i, TestMails.messageId("blocked", i), "r" + i + "@blocked.test"));
                    spool.enqueue(TestMails.mail("fine" + i, TestMails.messageId("fine", i), "r" + i + "@fine.test"));
                }
                await(() -> bounced.size() == 20, "every mail to blocked.test bounced");
                await(() -> target.domain("fine.test").distinctMessageIds() == 20, "every mail to fine.test delivered");
                LaneState lane = registry.find("blocked.test").orElseThrow();
                assertThat(lane.lane().dedicated()).isFalse();
                assertThat(LaneView.of(lane).bounceOrders()).containsOnlyKeys("blocked.test");
                assertThat(bounced).allSatisfy(m -> assertThat(m.getRecipients()).allMatch(r -> r.getDomain().asString().equals("blocked.test")));
                assertThat(bounced).allSatisfy(m -> assertThat(m.getErrorMessage()).contains("replyRule1").contains("blocked"));
                assertThat(target.domain("blocked.test").accepted()).isZero();
                assertThat(target.domain("blocked.test").refusedRecipients()).as("the threshold, and the mails in delivery then")
                    .isBetween(2L, 2L + 2);
                assertThat(lane.suspensionOf("blocked.test").suspensions()).as("bounced, not suspended").isZero();
            }
        }
    }
}
