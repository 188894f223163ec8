package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.delivery.LaneSpoolTest.await;

import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * mxGrouping: two tail domains that hash to different buckets by name but share one MX host share one
 * lane, so the lane's connection limit holds for the MX host: the target (the shared MX) never sees
 * more connections at once than the limit, and both domains' mail arrives.
 */
class MxGroupingTest {
    private static final String MX = "mx.shared.test";

    @Test
    void domainsSharingAnMxHostShareALane() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put(MX, Behaviour.slowData(Duration.ofMillis(20)));
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            InetAddress mx = target.domain(MX).address();
            MxResolver sharedMx = new MxResolver() {
                @Override
                public List<InetAddress> resolve(String domain) {
                    return List.of(mx);
                }

                @Override
                public String mxGroup(String domain) {
                    return MX.toUpperCase(java.util.Locale.ROOT); // groups are compared in lower case
                }
            };
            String[] keys = {"buckets", "16", "concurrency", "1", "port", String.valueOf(target.port())};
            LaneRouter byName = new LaneRouter(TestConfigs.config(keys));
            String first = "one.test";
            String second = null;
            for (int i = 0; second == null; i++) {
                if (!byName.laneOf("other" + i + ".test").equals(byName.laneOf(first))) {
                    second = "other" + i + ".test";
                }
            }

            LaneDeliveryConfig config = TestConfigs.config("buckets", "16", "concurrency", "1", "mxGrouping", "true",
                "port", String.valueOf(target.port()));
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = new LaneSpool(config, TestSpools.memoryQueues(), sharedMx, (mail, reply) -> { }, registry,
                    Clock.systemUTC())) {
                assertThat(spool.router().laneOf(second)).isEqualTo(spool.router().laneOf(first));
                for (int i = 0; i < 20; i++) {
                    spool.enqueue(TestMails.mail("a" + i, TestMails.messageId("grouped-a", i), "r" + i + "@" + first));
                    spool.enqueue(TestMails.mail("b" + i, TestMails.messageId("grouped-b", i), "r" + i + "@" + second));
                }
                await(() -> target.domain(MX).distinctMessageIds() == 40, "40 mails to the two domains delivered");
            }
            assertThat(target.domain(MX).maxConcurrentConnections()).isEqualTo(1);
        }
    }
}
