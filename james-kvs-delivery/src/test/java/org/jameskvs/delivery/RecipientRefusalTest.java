package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.james.core.MailAddress;
import org.apache.mailet.Mail;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * A RCPT refused in a transaction the server otherwise accepts (one recipient 550 5.1.1, the other and
 * the DATA 250): the refused recipient's reply goes through the reply rules like any other reply (two
 * of them suspend the domain under {@code code=550; enhancedCode=5.1.1; suspendAfterFailures=2}), and
 * the refused recipient's bounce carries that reply, not the transaction's 250. The accepted recipient
 * is delivered once per mail. With and without PIPELINING (the replies are read differently).
 */
class RecipientRefusalTest {
    private static final String DOMAIN = "mixed.test";
    private static final String REFUSAL = "550 5.1.1 <gone@mixed.test>: no such user here";

    @Test
    void aRefusedRecipientInAnAcceptedTransactionIsSeenByTheRulesAndBouncedWithItsOwnReply() throws Exception {
        refusedRecipientIsRuledAndBounced(Behaviour.accept());
    }

    @Test
    void theSameWithoutPipelining() throws Exception {
        refusedRecipientIsRuledAndBounced(Behaviour.accept().withoutPipelining());
    }

    private static void refusedRecipientIsRuledAndBounced(Behaviour behaviour) throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put(DOMAIN, behaviour);
        List<Mail> bounced = new CopyOnWriteArrayList<>();
        List<SmtpReply> bounceReplies = new CopyOnWriteArrayList<>();
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            target.domain(DOMAIN).refuseRecipient("gone@" + DOMAIN, REFUSAL);
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", DOMAIN, "buckets", "1",
                "concurrency", "1", "port", String.valueOf(target.port()), "retryDelays", "100", "maxAttempts", "1000",
                "replyRule1", "code=550; enhancedCode=5.1.1; suspendAfterFailures=2; suspendForMillis=3600000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> {
                bounced.add(mail);
                bounceReplies.add(reply);
            }, registry)) {
                LaneState lane = registry.find(DOMAIN).orElseThrow();
                for (int i = 0; i < 2; i++) {
                    spool.enqueue(TestMails.mail("mixed" + i, TestMails.messageId("mixed", i), "ok" + i + "@" + DOMAIN, "gone@" + DOMAIN));
                    int delivered = i + 1;
                    await(() -> target.domain(DOMAIN).accepted() == delivered && bounced.size() == delivered,
                        "mail " + delivered + " delivered to its accepted recipient, its refused one bounced");
                }
                assertThat(target.domain(DOMAIN).refusedRecipients()).isEqualTo(2);
                assertThat(bounced).allSatisfy(mail -> {
                    assertThat(mail.getRecipients()).containsExactly(new MailAddress("gone@" + DOMAIN));
                    assertThat(mail.getErrorMessage()).isEqualTo(REFUSAL);
                });
                assertThat(bounceReplies).allSatisfy(reply -> assertThat(reply.toString()).isEqualTo(REFUSAL));

                await(() -> lane.suspension().suspendedUntil() != null, "the domain suspended by replyRule1 after two refusals");
                assertThat(lane.suspension().reason()).contains("replyRule1").contains("no such user");
                assertThat(target.domain(DOMAIN).distinctMessageIds()).isEqualTo(2);
            }
        }
    }
}
