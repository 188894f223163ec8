package org.jameskvs.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.apache.james.queue.memory.MemoryMailQueueFactory;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.delivery.KvsSharedLimits;
import org.jameskvs.delivery.Lane;
import org.jameskvs.delivery.LaneDeliveryConfig;
import org.jameskvs.delivery.LaneRegistry;
import org.jameskvs.delivery.LaneSpool;
import org.jameskvs.delivery.MxResolver;
import org.jameskvs.delivery.SharedLimits;
import org.jameskvs.delivery.TestConfigs;
import org.jameskvs.delivery.TestMails;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.ReportChart;
import org.junit.jupiter.api.Test;

/**
 * Lane limits across two James nodes: two delivery engines in this JVM, each with its own mail queues
 * and its own KVS client, sharing one real KVS server process for their limits, both delivering one
 * destination's mail to the per-domain target. The target counts the connections open at once: never
 * above the lane's limit, although each node alone may open that many. The two nodes pace half the
 * lane's rate each once each sees the other; the delivered rate over the run and per window is printed
 * (not asserted: the machine is shared) and written with their charts (lanes-limits-connections.md/.png:
 * the connections open over time vs the limit; lanes-limits-rate.md/.png: the rate per window vs the
 * lane's; {@link LaneReport}). Longer, 60 s windows:
 * {@code -Dlanes.shared.perNode=1500 -Dlanes.shared.windowSeconds=60} (2 x 1,500 mails at 40/s: 75 s).
 */
class SharedLaneLimitsE2ETest {
    private static final String DOMAIN = "shared.test";
    private static final int LIMIT = 3;
    private static final int PER_NODE = Integer.getInteger("lanes.shared.perNode", 150);
    private static final int RATE = Integer.getInteger("lanes.shared.rate", 40);
    private static final Duration WINDOW = Duration.ofSeconds(Integer.getInteger("lanes.shared.windowSeconds", 2));
    private static final Duration TIMEOUT = Duration.ofMinutes(10);
    /** A throttle rule's rate (mails/s) and the mails each node has for the throttled domain. */
    private static final int THROTTLE = 10;
    private static final int THROTTLED_PER_NODE = 60;

    @Test
    void twoNodesNeverOpenMoreThanTheLaneLimit() throws Exception {
        // a slow end of DATA keeps connections open long enough to overlap across the nodes
        try (DomainSmtpTarget target = DomainSmtpTarget.start(Map.of(DOMAIN, Behaviour.slowData(Duration.ofMillis(30))));
             KvsServerProcess kvs = KvsServerProcess.start(workDirectory("shared-limits"))) {
            deliverFromTwoNodes(kvs, target, TestConfigs.config("dedicatedDomains", DOMAIN, "buckets", "1",
                "concurrency", String.valueOf(LIMIT), "initialConcurrency", String.valueOf(LIMIT),
                // few mails per connection and a short idle time: slots are freed and taken again often
                "maxDeliveriesPerConnection", "4", "idleConnectionMillis", "100",
                "port", String.valueOf(target.port()), "sharedLimits", "true", "sharedLimitsRefreshMillis", "200"));
            DomainSmtpTarget.Domain domain = target.domain(DOMAIN);
            System.out.printf("SharedLaneLimitsE2ETest: %d mails from 2 nodes, %d connections, at most %d open at once (limit %d)%n",
                domain.accepted(), domain.connections(), domain.maxConcurrentConnections(), LIMIT);
            ReportChart chart = ReportChart.lines(String.format("Connections open at the target, 2 nodes x %,d mails (limit %d)",
                PER_NODE, LIMIT), "seconds since the first connection", "connections open at once");
            List<long[]> timeline = domain.openConnectionsTimeline();
            long previous = 0;
            for (long[] change : timeline) { // a step line: the count holds until the next change
                double at = (change[0] - timeline.get(0)[0]) / 1000.0;
                chart.point("connections open", at, previous).point("connections open", at, change[1]);
                previous = change[1];
            }
            double end = (timeline.get(timeline.size() - 1)[0] - timeline.get(0)[0]) / 1000.0;
            chart.point("limit", 0, LIMIT).point("limit", end, LIMIT);
            LaneReport.write("limits-connections", String.format("# Lane connection limit across two nodes (SharedLaneLimitsE2ETest)%n%n"
                    + "2 x %,d mails, limit %d: at most **%d** connections open at once (%,d connections in all); %,d mails"
                    + " delivered. Load average at the end: %.1f on %d cores.%n", PER_NODE, LIMIT, domain.maxConcurrentConnections(),
                    domain.connections(), domain.accepted(), loadAverage(), Runtime.getRuntime().availableProcessors()),
                chart, "concurrent connections over time vs the limit");
            assertThat(domain.maxConcurrentConnections()).isLessThanOrEqualTo(LIMIT);
            assertThat(domain.accepted()).isEqualTo(2L * PER_NODE);
        }
    }

    @Test
    void twoNodesShareTheLaneRate() throws Exception {
        try (DomainSmtpTarget target = DomainSmtpTarget.start(Map.of(DOMAIN, Behaviour.accept()));
             KvsServerProcess kvs = KvsServerProcess.start(workDirectory("shared-rate"))) {
            deliverFromTwoNodes(kvs, target, TestConfigs.config("dedicatedDomains", DOMAIN, "buckets", "1",
                "concurrency", "4", "initialConcurrency", "4", "maxMessageRate", String.valueOf(RATE),
                "port", String.valueOf(target.port()), "sharedLimits", "true", "sharedLimitsRefreshMillis", "200"));
            Map<String, Long> byId = target.domain(DOMAIN).arrivals();
            List<Long> arrivals = new ArrayList<>(byId.values());
            arrivals.sort(Long::compare);
            double seconds = (arrivals.get(arrivals.size() - 1) - arrivals.get(0)) / 1000.0;
            double rate = (arrivals.size() - 1) / seconds;
            StringBuilder report = new StringBuilder(String.format(
                "SharedLaneLimitsE2ETest: 2 nodes, lane rate %d/s: %d mails in %.1f s = %.2f mails/s (%.1f %% of the rate)%n",
                RATE, arrivals.size(), seconds, rate, 100 * rate / RATE));
            long window = WINDOW.toMillis();
            long start = arrivals.get(0);
            ReportChart chart = ReportChart.lines(String.format("Lane rate across 2 nodes, 2 x %,d mails: mails/s per %d s window",
                PER_NODE, window / 1000), "window start (s since the first arrival)", "mails/s");
            for (long w = 0; (w + 1) * window <= arrivals.get(arrivals.size() - 1) - start; w++) {
                long from = start + w * window;
                long count = arrivals.stream().filter(t -> t >= from && t < from + window).count();
                long fromA = byId.entrySet().stream().filter(e -> e.getKey().startsWith("<a-"))
                    .filter(e -> e.getValue() >= from && e.getValue() < from + window).count();
                double windowRate = count * 1000.0 / window;
                report.append(String.format("  window %d (%d s): %.2f mails/s (%.1f %% of %d; node a %d, node b %d mails)%n", w,
                    window / 1000, windowRate, 100 * windowRate / RATE, RATE, fromA, count - fromA));
                chart.point("delivered", w * window / 1000.0, windowRate).point("target (lane rate)", w * window / 1000.0, RATE);
            }
            System.out.print(report);
            LaneReport.write("limits-rate", String.format("# Lane rate across two nodes (SharedLaneLimitsE2ETest)%n%n```%n%s```%n%n"
                    + "Load average at the end: %.1f on %d cores.%n", report, loadAverage(), Runtime.getRuntime().availableProcessors()),
                chart, "the rate per window vs the target");
            assertThat(arrivals).hasSize(2 * PER_NODE);
        }
    }

    /**
     * Shares by demand: with mail for the lane on node a only, a paces the whole lane rate (not half of
     * it); once b has mail for it too, each paces half; once a has none left, b the whole. Asserted: the
     * shares (events, waited for); printed: a's rate while alone.
     */
    @Test
    void aNodeWithNoMailForTheLaneHoldsNoPartOfItsRate() throws Exception {
        Lane lane = new Lane("lane-d-" + DOMAIN, true);
        int aloneMails = 10 * RATE; // a alone needs at least 10 s at the whole rate: b comes while a still has mail
        try (DomainSmtpTarget target = DomainSmtpTarget.start(Map.of(DOMAIN, Behaviour.accept()));
             KvsServerProcess kvs = KvsServerProcess.start(workDirectory("shared-demand"))) {
            LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", DOMAIN, "buckets", "1",
                "concurrency", "4", "initialConcurrency", "4", "maxMessageRate", String.valueOf(RATE),
                "port", String.valueOf(target.port()), "sharedLimits", "true", "sharedLimitsRefreshMillis", "200");
            MxResolver resolver = domain -> List.of(target.domain(domain).address());
            try (KvsSharedLimits limitsA = limits(kvs, "node-a", config);
                 KvsSharedLimits limitsB = limits(kvs, "node-b", config)) {
                Waits.until(() -> limitsA.rateShare() == 0.5 && limitsB.rateShare() == 0.5, "each node sees the other", TIMEOUT);
                try (LaneSpool a = spool(config, resolver, limitsA);
                     LaneSpool b = spool(config, resolver, limitsB)) {
                    for (int i = 0; i < aloneMails; i++) {
                        a.enqueue(TestMails.mail("a" + i, TestMails.messageId("a", i), "r" + i + "@" + DOMAIN));
                    }
                    Waits.until(() -> limitsA.rateShare(lane) == 1.0, "a, the only node with mail for the lane, paces all its rate", TIMEOUT);
                    long aloneFrom = System.currentTimeMillis();
                    int aloneBefore = target.domain(DOMAIN).distinctMessageIds();
                    Waits.until(() -> target.domain(DOMAIN).distinctMessageIds() >= aloneBefore + 2 * RATE,
                        "a delivers alone for a while", TIMEOUT);
                    double aloneRate = (target.domain(DOMAIN).distinctMessageIds() - aloneBefore) * 1000.0
                        / (System.currentTimeMillis() - aloneFrom);
                    for (int i = 0; i < PER_NODE; i++) {
                        b.enqueue(TestMails.mail("b" + i, TestMails.messageId("b", i), "r" + i + "@" + DOMAIN));
                    }
                    Waits.until(() -> limitsA.nodesWithDemand(lane) == 2 && limitsB.nodesWithDemand(lane) == 2
                        && limitsA.rateShare(lane) == 0.5 && limitsB.rateShare(lane) == 0.5,
                        "both nodes with mail for the lane: half each", TIMEOUT);
                    Waits.until(() -> target.domain(DOMAIN).messageIds().containsAll(ids("a", aloneMails)), "a's mail delivered", TIMEOUT);
                    Waits.until(() -> limitsB.rateShare(lane) == 1.0 || target.domain(DOMAIN).distinctMessageIds() == aloneMails + PER_NODE,
                        "a without mail: b paces all the rate (or b is done too)", TIMEOUT);
                    Waits.until(() -> target.domain(DOMAIN).distinctMessageIds() == aloneMails + PER_NODE, "every mail delivered", TIMEOUT);
                    System.out.printf("SharedLaneLimitsE2ETest: lane rate %d/s, 2 live nodes, mail on a only: a delivered %.1f mails/s"
                        + " (%.0f %% of the lane rate; an even split would cap it at 50 %%)%n", RATE, aloneRate, 100 * aloneRate / RATE);
                    assertThat(target.domain(DOMAIN).accepted()).as("duplicates").isEqualTo(aloneMails + PER_NODE);
                }
            }
        }
    }

    /**
     * A reply rule's throttle of a tail domain, with {@code sharedLimits}: both nodes see the domain's
     * "slow down" replies and throttle it (in its bucket, alone) at THROTTLE mails/s, then each has
     * THROTTLED_PER_NODE mails for it. The nodes share the throttle's rate by demand as they share a
     * lane's rate, so together they stay at THROTTLE: asserted as a lower bound on the time from the
     * first to the last paced arrival (80 % of what the rate allows; a loaded machine only makes it
     * longer). Each node pacing the whole throttle alone would take half of it.
     */
    @Test
    void twoNodesShareATailDomainsThrottle() throws Exception {
        String tail = "tail.test";
        try (DomainSmtpTarget target = DomainSmtpTarget.start(Map.of(tail, Behaviour.rcptReply("451 4.7.0 slow down please")));
             KvsServerProcess kvs = KvsServerProcess.start(workDirectory("shared-throttle"))) {
            LaneDeliveryConfig config = TestConfigs.config("buckets", "1", "concurrency", "4", "initialConcurrency", "4",
                "retryDelays", "200", "maxAttempts", "1000", "port", String.valueOf(target.port()),
                "sharedLimits", "true", "sharedLimitsRefreshMillis", "200",
                "replyRule1", "text=slow down; action=throttle; maxMessageRate=" + THROTTLE
                    + "; suspendAfterFailures=1; throttleForMillis=3600000");
            MxResolver resolver = domain -> List.of(target.domain(domain).address());
            LaneRegistry registryA = new LaneRegistry();
            LaneRegistry registryB = new LaneRegistry();
            try (KvsSharedLimits limitsA = limits(kvs, "node-a", config);
                 KvsSharedLimits limitsB = limits(kvs, "node-b", config)) {
                Waits.until(() -> limitsA.rateShare() == 0.5 && limitsB.rateShare() == 0.5, "each node sees the other", TIMEOUT);
                try (LaneSpool a = spool(config, resolver, limitsA, registryA);
                     LaneSpool b = spool(config, resolver, limitsB, registryB)) {
                    a.enqueue(TestMails.mail("first-a", TestMails.messageId("first-a", 0), "first@" + tail));
                    b.enqueue(TestMails.mail("first-b", TestMails.messageId("first-b", 0), "first@" + tail));
                    Waits.until(() -> throttled(registryA, tail) && throttled(registryB, tail), "both nodes throttle " + tail, TIMEOUT);
                    target.domain(tail).behave(Behaviour.accept());
                    for (int i = 0; i < THROTTLED_PER_NODE; i++) {
                        a.enqueue(TestMails.mail("a" + i, TestMails.messageId("a", i), "r" + i + "@" + tail));
                        b.enqueue(TestMails.mail("b" + i, TestMails.messageId("b", i), "r" + i + "@" + tail));
                    }
                    Waits.until(() -> target.domain(tail).distinctMessageIds() == 2 + 2 * THROTTLED_PER_NODE,
                        "every mail of both nodes delivered", TIMEOUT);
                }
            }
            List<Long> arrivals = new ArrayList<>();
            target.domain(tail).arrivals().forEach((id, at) -> {
                if (id.startsWith("<a-") || id.startsWith("<b-")) {
                    arrivals.add(at);
                }
            });
            arrivals.sort(Long::compare);
            double seconds = (arrivals.get(arrivals.size() - 1) - arrivals.get(0)) / 1000.0;
            double paceSeconds = (arrivals.size() - 1) / (double) THROTTLE;
            System.out.printf("SharedLaneLimitsE2ETest: 2 nodes, %s throttled at %d/s: %d mails in %.1f s = %.2f mails/s%n",
                tail, THROTTLE, arrivals.size(), seconds, (arrivals.size() - 1) / seconds);
            assertThat(seconds).as("%d mails at %d/s across both nodes take %.1f s from first to last", arrivals.size(), THROTTLE,
                paceSeconds).isGreaterThanOrEqualTo(0.8 * paceSeconds);
            assertThat(target.domain(tail).accepted()).as("duplicates").isEqualTo(2 + 2L * THROTTLED_PER_NODE);
        }
    }

    private static boolean throttled(LaneRegistry registry, String domain) {
        return registry.find(domain).map(state -> state.stats().throttledDomains(System.currentTimeMillis()).containsKey(domain))
            .orElse(false);
    }

    private static double loadAverage() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static java.util.Set<String> ids(String tag, int count) {
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (int i = 0; i < count; i++) {
            ids.add(TestMails.messageId(tag, i));
        }
        return ids;
    }

    @Test
    void aSlotIsHeldByOneNodeAtATimeAndFreedWhenItsHolderGoes() throws Exception {
        try (KvsServerProcess kvs = KvsServerProcess.start(workDirectory("shared-slots"))) {
            LaneDeliveryConfig config = TestConfigs.config("sharedLimits", "true");
            Lane lane = new Lane("lane-d-" + DOMAIN, true);
            try (KvsSharedLimits a = limits(kvs, "node-a", config)) {
                KvsSharedLimits b = limits(kvs, "node-b", config);
                SharedLimits.Slot held = b.tryTake(lane, 1);
                assertThat(held).isNotNull();
                assertThat(held.held()).isTrue();
                assertThat(a.tryTake(lane, 1)).as("the lane's only slot, held by b").isNull();
                held.release();
                SharedLimits.Slot[] taken = new SharedLimits.Slot[1];
                Waits.until(() -> (taken[0] = a.tryTake(lane, 1)) != null, "a takes the slot b released", TIMEOUT);
                assertThat(b.tryTake(lane, 1)).as("the slot, now held by a").isNull();
                b.close(); // b leaves, holding nothing now
                taken[0].release();
                Waits.until(() -> (taken[0] = a.tryTake(lane, 1)) != null, "a takes it again", TIMEOUT);
                SharedLimits.Slot aSlot = taken[0];
                KvsSharedLimits c = limits(kvs, "node-c", config);
                try (c) {
                    assertThat(c.tryTake(lane, 1)).isNull();
                    a.close(); // node a goes: its KVS connection closes, the server drops its locks
                    assertThat(aSlot.held()).isFalse();
                    Waits.until(() -> c.tryTake(lane, 1) != null, "c takes the slot of the node that went", TIMEOUT);
                }
            }
        }
    }

    /**
     * Two engines with their own queues and KVS clients, limits shared through {@code kvs}: once each
     * sees the other, each gets PER_NODE mails for DOMAIN (Message-IDs tagged a and b); returns once all
     * arrived.
     */
    private static void deliverFromTwoNodes(KvsServerProcess kvs, DomainSmtpTarget target, LaneDeliveryConfig config)
            throws Exception {
        MxResolver resolver = domain -> List.of(target.domain(domain).address());
        try (KvsSharedLimits limitsA = limits(kvs, "node-a", config);
             KvsSharedLimits limitsB = limits(kvs, "node-b", config)) {
            Waits.until(() -> limitsA.rateShare() == 0.5 && limitsB.rateShare() == 0.5, "each node sees the other", TIMEOUT);
            try (LaneSpool a = spool(config, resolver, limitsA);
                 LaneSpool b = spool(config, resolver, limitsB)) {
                for (int i = 0; i < PER_NODE; i++) {
                    a.enqueue(TestMails.mail("a" + i, TestMails.messageId("a", i), "r" + i + "@" + DOMAIN));
                    b.enqueue(TestMails.mail("b" + i, TestMails.messageId("b", i), "r" + i + "@" + DOMAIN));
                }
                Waits.until(() -> target.domain(DOMAIN).distinctMessageIds() == 2 * PER_NODE,
                    "every mail of both nodes delivered", TIMEOUT);
            }
        }
    }

    private static Path workDirectory(String name) throws java.io.IOException {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve(name + "-" + System.currentTimeMillis());
        return Files.createDirectories(run);
    }

    private static KvsSharedLimits limits(KvsServerProcess kvs, String node, LaneDeliveryConfig config) {
        KvsClient client = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(kvs.port())
            .credentials("james", KvsServerProcess.PASSWORD).build());
        return new KvsSharedLimits(client, true, node, config.queuePrefix() + "nodes/", config.sharedLimitsMaxNodes(),
            config.sharedLimitsRefresh());
    }

    private static LaneSpool spool(LaneDeliveryConfig config, MxResolver resolver, KvsSharedLimits limits) {
        return spool(config, resolver, limits, new LaneRegistry());
    }

    private static LaneSpool spool(LaneDeliveryConfig config, MxResolver resolver, KvsSharedLimits limits, LaneRegistry registry) {
        return new LaneSpool(config, new MemoryMailQueueFactory(new RawMailQueueItemDecoratorFactory()), resolver,
            (mail, reply) -> { }, registry, Clock.systemUTC(), limits);
    }
}
