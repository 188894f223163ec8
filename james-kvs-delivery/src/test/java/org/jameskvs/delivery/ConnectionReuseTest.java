package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * With one connection per lane, N mails take N / maxDeliveriesPerConnection connections: no more, no
 * fewer; and a kept connection serves every domain of the lane whose MX address it is connected to.
 */
class ConnectionReuseTest {

    @Test
    void aConnectionCarriesMaxDeliveriesPerConnectionMails() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("reuse.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", "reuse.test", "buckets", "1",
                "concurrency", "1", "maxDeliveriesPerConnection", "5", "idleConnectionMillis", "600000",
                "port", String.valueOf(target.port()));
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> { }, registry)) {
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("m" + i, TestMails.messageId("reuse", i), "r" + i + "@reuse.test"));
                }
                await(() -> target.domain("reuse.test").accepted() == 20, "20 mails delivered");
                assertThat(target.domain("reuse.test").connections()).isEqualTo(4);
                assertThat(target.domain("reuse.test").maxConcurrentConnections()).isEqualTo(1);
                assertThat(registry.find("reuse.test").orElseThrow().stats().connectionsOpened()).isEqualTo(4);
            }
        }
    }

    /**
     * Two domains of one lane (one bucket) whose MX is the same host, mail alternating between them:
     * one connection carries both (without sharing, every change of domain closed the idle connection
     * and opened a new one: about one connection per mail).
     */
    @Test
    void domainsWithTheSameMxShareAKeptConnection() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("mx.shared.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            java.net.InetAddress mx = target.domain("mx.shared.test").address();
            MxResolver sameMx = domain -> java.util.List.of(mx);
            LaneDeliveryConfig config = TestConfigs.config("buckets", "1", "concurrency", "1",
                "maxDeliveriesPerConnection", "100", "idleConnectionMillis", "600000",
                "port", String.valueOf(target.port()));
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = new LaneSpool(config, TestSpools.memoryQueues(), sameMx, (mail, reply) -> { },
                    registry, java.time.Clock.systemUTC())) {
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("a" + i, TestMails.messageId("shared-a", i), "r" + i + "@one.test"));
                    spool.enqueue(TestMails.mail("b" + i, TestMails.messageId("shared-b", i), "r" + i + "@two.test"));
                }
                await(() -> target.domain("mx.shared.test").distinctMessageIds() == 40, "40 mails delivered");
                LaneStats stats = registry.find("one.test").orElseThrow().stats();
                assertThat(registry.find("two.test").orElseThrow().stats()).isSameAs(stats); // one lane
                assertThat(target.domain("mx.shared.test").connections()).isEqualTo(1);
                assertThat(stats.connectionsOpened()).isEqualTo(1);
                assertThat(stats.connectionsShared()).isPositive();
            }
        }
    }
}
