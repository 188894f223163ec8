package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.james.core.MailAddress;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SMTP client against the per-domain target: reuse, 421, a stalled greeting, dot-stuffing. */
class SmtpSessionTest {
    private static DomainSmtpTarget target;

    @BeforeAll
    static void start() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("ok.test", Behaviour.accept());
        behaviours.put("plain.test", Behaviour.accept().withoutPipelining());
        behaviours.put("busy.test", Behaviour.refuse421());
        behaviours.put("stall.test", Behaviour.stallGreeting());
        behaviours.put("slow.test", Behaviour.slowData(java.time.Duration.ofSeconds(3)));
        target = DomainSmtpTarget.start(behaviours);
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    private static LaneDeliveryConfig config() {
        return TestConfigs.config("port", String.valueOf(target.port()), "greetingTimeoutMillis", "500",
            "commandTimeoutMillis", "5000", "dataTimeoutMillis", "5000");
    }

    @Test
    void severalMailsGoOverOneConnection() throws Exception {
        LaneDeliveryConfig config = config();
        try (SmtpSession session = SmtpSession.open(List.of(new InetSocketAddress(target.domain("ok.test").address(), config.port())), config)) {
            for (int i = 0; i < 3; i++) {
                TransactionResult result = session.send("sender@origin.test", List.of(new MailAddress("r" + i + "@ok.test")),
                    TestMails.message(TestMails.messageId("reuse", i), ".a line starting with a dot\r\n.\r\nend"));
                assertThat(result.delivered()).hasSize(1);
                assertThat(result.reply().code()).isEqualTo(250);
            }
            assertThat(session.transactions()).isEqualTo(3);
        }
        assertThat(target.domain("ok.test").connections()).isEqualTo(1);
        assertThat(target.domain("ok.test").messageIds())
            .containsExactlyInAnyOrder(TestMails.messageId("reuse", 0), TestMails.messageId("reuse", 1), TestMails.messageId("reuse", 2));
    }

    /**
     * A gateway list (or an MX list) goes on to the next host when one cannot be connected to (nothing
     * listens), refuses its greeting (421) or does not greet in time: the mail goes to the first that
     * greets, over one connection there.
     */
    @Test
    void theNextHostIsTriedWhenOneCannotBeConnectedToOrGreeted() throws Exception {
        LaneDeliveryConfig config = config();
        int closedPort;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort(); // closed again below: nothing listens there
        }
        long okBefore = target.domain("ok.test").connections();
        List<InetSocketAddress> hosts = List.of(
            new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), closedPort),
            new InetSocketAddress(target.domain("busy.test").address(), config.port()),
            new InetSocketAddress(target.domain("stall.test").address(), config.port()),
            new InetSocketAddress(target.domain("ok.test").address(), config.port()));
        long busyBefore = target.domain("busy.test").refused();
        try (SmtpSession session = SmtpSession.open(hosts, config)) {
            assertThat(session.remoteSocketAddress()).isEqualTo(hosts.get(3));
            TransactionResult result = session.send("sender@origin.test", List.of(new MailAddress("next@ok.test")),
                TestMails.message(TestMails.messageId("next-host", 0), "body"));
            assertThat(result.reply().code()).isEqualTo(250);
        }
        assertThat(target.domain("busy.test").refused()).as("the 421 host was tried").isEqualTo(busyBefore + 1);
        assertThat(target.domain("ok.test").connections()).isEqualTo(okBefore + 1);
        assertThat(target.domain("ok.test").messageIds()).contains(TestMails.messageId("next-host", 0));
    }

    @Test
    void commandsArePipelinedWhereTheServerOffersIt() throws Exception {
        assertThat(sendTwoRecipientMails("ok.test")).isTrue();
        assertThat(target.domain("ok.test").pipelinedTransactions()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void commandsWaitForEachReplyWhereTheServerDoesNotOfferPipelining() throws Exception {
        assertThat(sendTwoRecipientMails("plain.test")).isFalse();
        assertThat(target.domain("plain.test").pipelinedTransactions()).isZero();
        assertThat(target.domain("plain.test").accepted()).isEqualTo(3);
    }

    /** Three mails with two recipients each over one connection; returns whether it pipelined. */
    private static boolean sendTwoRecipientMails(String domain) throws Exception {
        LaneDeliveryConfig config = config();
        try (SmtpSession session = SmtpSession.open(List.of(new InetSocketAddress(target.domain(domain).address(), config.port())), config)) {
            for (int i = 0; i < 3; i++) {
                TransactionResult result = session.send("sender@origin.test",
                    List.of(new MailAddress("a" + i + "@" + domain), new MailAddress("b" + i + "@" + domain)),
                    TestMails.message(TestMails.messageId("pipe-" + domain, i), "body " + i));
                assertThat(result.delivered()).hasSize(2);
                assertThat(result.reply().code()).isEqualTo(250);
            }
            return session.pipelining();
        }
    }

    @Test
    void a421GreetingFailsBeforeGreetingWithItsReply() {
        LaneDeliveryConfig config = config();
        assertThatThrownBy(() -> SmtpSession.open(List.of(new InetSocketAddress(target.domain("busy.test").address(), config.port())), config))
            .isInstanceOfSatisfying(SmtpFailure.class, f -> {
                assertThat(f.reply().code()).isEqualTo(421);
                assertThat(f.beforeGreeting()).isTrue();
            });
    }

    @Test
    void aRefusedConnectFailsBeforeGreeting() throws Exception {
        LaneDeliveryConfig config = config();
        java.net.InetAddress nobody = java.net.InetAddress.getByName("127.0.0.254"); // loopback, nothing listens there
        assertThatThrownBy(() -> SmtpSession.open(List.of(new InetSocketAddress(nobody, config.port())), config))
            .isInstanceOfSatisfying(SmtpFailure.class, f -> {
                assertThat(f.reply().code()).isZero();
                assertThat(f.reply().text()).contains("ConnectException");
                assertThat(f.beforeGreeting()).isTrue();
            });
    }

    @Test
    void aSlowAnswerToTheDataEndsTheConnectionAtTheDataTimeout() throws Exception {
        LaneDeliveryConfig config = TestConfigs.config("port", String.valueOf(target.port()), "dataTimeoutMillis", "300");
        SmtpSession session = SmtpSession.open(List.of(new InetSocketAddress(target.domain("slow.test").address(), config.port())), config);
        assertThatThrownBy(() -> session.send("sender@origin.test", List.of(new MailAddress("r@slow.test")),
            TestMails.message(TestMails.messageId("slow", 0), "body")))
            .isInstanceOfSatisfying(SmtpFailure.class, f -> {
                assertThat(f.reply().text()).contains("timeout");
                assertThat(f.beforeGreeting()).isFalse();
            });
        assertThat(session.isOpen()).isFalse();
    }

    @Test
    void aStalledGreetingTimesOut() {
        LaneDeliveryConfig config = config();
        assertThatThrownBy(() -> SmtpSession.open(List.of(new InetSocketAddress(target.domain("stall.test").address(), config.port())), config))
            .isInstanceOfSatisfying(SmtpFailure.class, f -> {
                assertThat(f.reply().code()).isZero();
                assertThat(f.reply().text()).contains("timeout");
                assertThat(f.beforeGreeting()).isTrue();
            });
    }
}
