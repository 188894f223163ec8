package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jameskvs.delivery.LaneDeliveryConfig.Gateway;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * Gateway mode ({@code gateway}, {@code gatewayPort}, as RemoteDelivery's): every lane delivers to the
 * gateway instead of its domain's MX hosts, while lanes stay per domain / bucket.
 */
class GatewayModeTest {
    /** An MX lookup that knows no domain: with a gateway it must never be needed. */
    private static final MxResolver NO_MX = domain -> {
        throw new SmtpFailure(SmtpReply.noReply("no MX for " + domain + " in this test"), true, null);
    };

    @Test
    void gatewayListIsReadAsRemoteDeliveryReadsIt() {
        LaneDeliveryConfig none = TestConfigs.config();
        assertThat(none.gateways()).isEmpty();
        assertThat(none.gatewayMode()).isFalse();

        LaneDeliveryConfig config = TestConfigs.config("gateway", "127.0.0.1:2526, relay.example ,[::1]:2600",
            "gatewayPort", "2527");
        assertThat(config.gateways()).containsExactly(new Gateway("127.0.0.1", 2526), new Gateway("relay.example", 2527),
            new Gateway("::1", 2600));
        assertThat(config.gatewayMode()).isTrue();
        assertThat(TestConfigs.config("gateway", "relay.example").gateways()).containsExactly(new Gateway("relay.example", 25));

        assertThatThrownBy(() -> TestConfigs.config("gateway", "relay.example:smtp"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port must be an integer");
        assertThatThrownBy(() -> TestConfigs.config("gateway", "relay.example", "gatewayPort", "70000"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gatewayPort must be a port");
    }

    @Test
    void withAGatewayEveryDomainResolvesToTheGatewayAddress() throws Exception {
        LaneDeliveryConfig config = TestConfigs.config("gateway", "127.0.0.9:2526, 127.0.0.10", "gatewayPort", "2600",
            "dedicatedDomains", "gmail.com");
        MxResolver resolver = GatewayResolver.forConfig(config, NO_MX);
        List<InetSocketAddress> gateway = List.of(new InetSocketAddress("127.0.0.9", 2526), new InetSocketAddress("127.0.0.10", 2600));
        for (String domain : List.of("gmail.com", "example.org", "tail.test")) {
            assertThat(resolver.targets(domain, 25)).as(domain).isEqualTo(gateway);
            assertThat(resolver.mxGroup(domain)).isEqualTo(domain); // lanes stay per domain / bucket
        }
        // without a gateway the lanes ask the MX lookup (here: it knows nothing)
        assertThatThrownBy(() -> GatewayResolver.forConfig(TestConfigs.config(), NO_MX).targets("gmail.com", 25))
            .isInstanceOf(SmtpFailure.class);
    }

    /**
     * Mail to three domains (one dedicated lane, the others in buckets), no MX known for any of them and
     * {@code port} pointing nowhere: every mail reaches the gateway, each lane keeping its own identity.
     */
    @Test
    void everyLaneDeliversThroughTheGateway() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("gateway.test", Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            String gateway = target.domain("gateway.test").address().getHostAddress() + ":" + target.port();
            LaneDeliveryConfig config = TestConfigs.config("gateway", gateway, "port", "1",
                "dedicatedDomains", "busy.test", "buckets", "4", "concurrency", "2",
                "maxDeliveriesPerConnection", "100", "idleConnectionMillis", "600000", "retryDelays", "100");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = new LaneSpool(config, TestSpools.memoryQueues(), NO_MX, (mail, reply) -> { },
                    registry, Clock.systemUTC())) {
                for (int i = 0; i < 10; i++) {
                    for (String domain : List.of("busy.test", "one.test", "two.test")) {
                        spool.enqueue(TestMails.mail(domain + i, TestMails.messageId(domain, i), "r" + i + "@" + domain));
                    }
                }
                await(() -> target.domain("gateway.test").distinctMessageIds() == 30 && delivered(registry) == 30,
                    "30 mails at the gateway, counted delivered by their lanes");
                assertThat(registry.find("busy.test").orElseThrow().lane().dedicated()).isTrue();
                assertThat(registry.find("one.test").orElseThrow().lane().dedicated()).isFalse();
                assertThat(registry.find("busy.test").orElseThrow().stats().delivered()).isEqualTo(10);
            }
        }
    }

    private static long delivered(LaneRegistry registry) {
        long delivered = 0;
        for (LaneState lane : registry.lanes()) {
            delivered += lane.stats().delivered();
        }
        return delivered;
    }
}
