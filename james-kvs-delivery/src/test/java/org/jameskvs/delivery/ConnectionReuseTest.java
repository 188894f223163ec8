package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/** With one connection per lane, N mails take N / maxDeliveriesPerConnection connections: no more, no fewer. */
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
}
