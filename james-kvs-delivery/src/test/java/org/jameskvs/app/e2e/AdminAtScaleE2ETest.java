package org.jameskvs.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.james.server.core.MailImpl;
import org.jameskvs.delivery.LaneDeliveryConfig;
import org.jameskvs.delivery.LaneRegistry;
import org.jameskvs.delivery.LaneRoutes;
import org.jameskvs.delivery.LaneSpool;
import org.jameskvs.delivery.LaneState;
import org.jameskvs.delivery.MxResolver;
import org.jameskvs.delivery.TestConfigs;
import org.jameskvs.delivery.TestMails;
import org.jameskvs.testkit.FreePorts;
import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.ReportChart;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import spark.Service;

/**
 * Issue 13's admin and heap targets, measured: lanes on KVS mail queues (a real KVS server process,
 * this JVM's KVS client, as in {@link DelayedBacklogE2ETest}), every lane suspended so that nothing
 * leaves, {@code lanes.admin.mails} mails (default 20,000) queued across {@code lanes.admin.domains}
 * recipient domains (default 1,000; the first {@code lanes.admin.dedicated}, default 100, have a lane
 * of their own, the others share the 64 buckets). The lane routes are served over HTTP by a Spark
 * service in this JVM (as James's webadmin serves them). Printed: how long {@code GET /lanes} (every
 * lane's counts) and {@code GET /lanes/{domain}} take (after a warm-up: least, median, largest), and
 * this JVM's live heap before and after the mails were queued. Asserted (correctness only, no timing):
 * every lane's {@code queued} equals the mails put in it, a domain's route names its lane and, for a tail
 * domain, gives that domain's own count in its {@code domain} field. Written:
 * lanes-admin.md and lanes-admin.png ({@link LaneReport}), the request times of every size run into the
 * same report directory. The
 * issue's size: {@code -Dlanes.admin.mails=1000000 -Dlanes.admin.domains=10000}.
 */
class AdminAtScaleE2ETest {
    private static final int MAILS = Integer.getInteger("lanes.admin.mails", 20_000);
    private static final int DOMAINS = Integer.getInteger("lanes.admin.domains", 1_000);
    private static final int DEDICATED = Integer.getInteger("lanes.admin.dedicated", 100);
    private static final int REQUESTS = Integer.getInteger("lanes.admin.requests", 20);
    /** Lines of the live class histogram printed with each heap figure (0: none). */
    private static final int HISTOGRAM = Integer.getInteger("lanes.admin.histogram", 0);
    private static final Duration TIMEOUT = Duration.ofMinutes(60);

    static {
        // Jetty and the JDK's HTTP client log every request at DEBUG: thousands of lines around the figures
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
            .setLevel(ch.qos.logback.classic.Level.INFO);
    }

    @Test
    void perDestinationCountsAreServedFromCountersWithManyMailsQueued() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("admin-scale-" + System.currentTimeMillis());
        Files.createDirectories(run);
        List<String> dedicated = new ArrayList<>();
        for (int d = 0; d < Math.min(DEDICATED, DOMAINS); d++) {
            dedicated.add(domain(d));
        }
        LaneDeliveryConfig config = TestConfigs.config("dedicatedDomains", String.join(",", dedicated),
            "concurrency", "1", "port", "1");
        MxResolver unreachable = domain -> { // never asked: every lane is suspended before the first mail
            throw new IllegalStateException("no delivery in this test");
        };
        LaneRegistry registry = new LaneRegistry();
        int webadminPort = FreePorts.next();
        Service http = Service.ignite().ipAddress("127.0.0.1").port(webadminPort);
        try (KvsServerProcess kvs = KvsServerProcess.start(run.resolve("kvs"));
             KvsLaneQueues lanesQueues = KvsLaneQueues.connect(kvs, "admin-scale");
             LaneSpool spool = new LaneSpool(config, lanesQueues.factory(), unreachable, (mail, reply) -> { }, registry,
                 Clock.systemUTC())) {
            registry.lanes().forEach(lane -> lane.suspension().suspend(Duration.ofDays(1), "held for the measurement"));
            new LaneRoutes(registry).define(http);
            http.init();
            http.awaitInitialization();
            LaneAdmin admin = new LaneAdmin(webadminPort);
            Map<String, Long> expected = new HashMap<>();
            for (int d = 0; d < DOMAINS; d++) {
                expected.merge(spool.router().laneOf(domain(d)).name(), (long) (MAILS / DOMAINS + (d < MAILS % DOMAINS ? 1 : 0)), Long::sum);
            }
            time(() -> admin.lanes(), 3); // JIT, connections
            long heapEmpty = KvsLaneQueues.liveHeap();
            printHistogram("empty");

            long fillStart = System.nanoTime();
            fill(spool);
            double fillSeconds = (System.nanoTime() - fillStart) / 1e9;
            long heapFull = KvsLaneQueues.liveHeap();
            printHistogram("with the mails queued");

            JsonNode[] last = new JsonNode[1];
            long[] all = time(() -> last[0] = admin.lanes(), REQUESTS);
            long[] one = time(new Request() {
                private int next;

                @Override
                public void run() throws Exception {
                    admin.lane(domain(next++ * 7919 % DOMAINS));
                }
            }, REQUESTS);

            Map<String, Long> queued = new HashMap<>();
            long total = 0;
            for (JsonNode lane : last[0]) {
                queued.put(lane.get("lane").asText(), lane.get("queued").asLong());
                total += lane.get("queued").asLong();
            }
            System.out.printf("AdminAtScaleE2ETest: %,d mails across %,d domains in %d lanes (%d dedicated, %d buckets),"
                    + " queued in %.1f s (%.0f/s); GET /lanes (all lanes' counts): least %.1f ms, median %.1f ms, largest %.1f ms"
                    + " over %d requests; GET /lanes/{domain}: least %.1f ms, median %.1f ms, largest %.1f ms; live heap"
                    + " %.1f MB with the lanes empty, %.1f MB with the mails queued (%+.1f MB, %+.1f bytes per mail)%n",
                MAILS, DOMAINS, registry.lanes().size(), dedicated.size(), config.buckets(), fillSeconds, MAILS / fillSeconds,
                all[0] / 1e6, all[all.length / 2] / 1e6, all[all.length - 1] / 1e6, REQUESTS,
                one[0] / 1e6, one[one.length / 2] / 1e6, one[one.length - 1] / 1e6,
                heapEmpty / 1e6, heapFull / 1e6, (heapFull - heapEmpty) / 1e6, (heapFull - heapEmpty) / (double) MAILS);
            report(registry.lanes().size(), fillSeconds, all, one, heapEmpty, heapFull);
            assertThat(total).as("mails counted over every lane").isEqualTo(MAILS);
            assertThat(queued).as("each lane's count").containsAllEntriesOf(expected);
            assertThat(queued.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(MAILS);
            for (int d : new int[] {0, DOMAINS / 2, DOMAINS - 1}) {
                String lane = spool.router().laneOf(domain(d)).name();
                JsonNode view = admin.lane(domain(d));
                assertThat(view.get("lane").asText()).isEqualTo(lane);
                assertThat(view.get("queued").asLong()).isEqualTo(expected.get(lane));
                assertThat(view.get("suspended").asBoolean()).isTrue();
                if (d < DEDICATED) {
                    assertThat(view.has("domain")).as("a dedicated domain's answer is its lane's").isFalse();
                } else { // a tail domain: its own count besides its bucket's
                    JsonNode own = view.get("domain");
                    assertThat(own.get("domain").asText()).isEqualTo(domain(d));
                    assertThat(own.get("counted").asBoolean()).isTrue();
                    assertThat(own.get("queued").asLong()).isEqualTo(MAILS / DOMAINS + (d < MAILS % DOMAINS ? 1 : 0));
                    assertThat(own.get("delayed").asLong()).isZero();
                    assertThat(own.get("inFlight").asLong()).isZero();
                    assertThat(view.get("queued").asLong()).as("the bucket's").isGreaterThan(own.get("queued").asLong());
                }
            }
            for (LaneState lane : registry.lanes()) {
                assertThat(lane.stats().delivered()).as("nothing delivered from %s", lane.lane().name()).isZero();
            }
        } finally {
            http.stop();
            http.awaitStop();
        }
    }

    /**
     * lanes-admin.md and .png: this size's request times with those of the other sizes measured into the
     * same report directory (lanes-admin.tsv), one group of bars per size.
     */
    private static void report(int lanes, double fillSeconds, long[] all, long[] one, long heapEmpty, long heapFull)
            throws java.io.IOException {
        String size = String.format("%,d mails / %,d domains, %d lanes", MAILS, DOMAINS, lanes);
        Map<String, List<Double>> sizes = LaneReport.accumulate("admin", size, List.of(all[all.length / 2] / 1e6,
            all[all.length - 1] / 1e6, one[one.length / 2] / 1e6, one[one.length - 1] / 1e6));
        String[] series = {"GET /lanes median", "GET /lanes largest", "GET /lanes/{domain} median", "GET /lanes/{domain} largest"};
        ReportChart chart = ReportChart.bars("Lane counts over HTTP: " + REQUESTS + " requests per size (target <= 200 ms)",
            null, "ms");
        StringBuilder md = new StringBuilder("# Per-destination counts at scale (AdminAtScaleE2ETest)\n\n")
            .append(String.format("This run: %s (%d dedicated), queued in %.1f s; GET /lanes least / median / largest"
                    + " %.1f / %.1f / %.1f ms, GET /lanes/{domain} %.1f / %.1f / %.1f ms over %d requests each; live heap"
                    + " %.1f -> %.1f MB (%+.1f MB). Load average at the end: %.1f on %d cores.%n%n",
                size, DEDICATED, fillSeconds, all[0] / 1e6, all[all.length / 2] / 1e6, all[all.length - 1] / 1e6,
                one[0] / 1e6, one[one.length / 2] / 1e6, one[one.length - 1] / 1e6, REQUESTS, heapEmpty / 1e6,
                heapFull / 1e6, (heapFull - heapEmpty) / 1e6,
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors()))
            .append("| size | ").append(String.join(" (ms) | ", series)).append(" (ms) |\n|---|---|---|---|---|\n");
        sizes.forEach((key, values) -> {
            md.append("| ").append(key);
            for (int i = 0; i < series.length; i++) {
                md.append(String.format(" | %.1f", values.get(i)));
                chart.bar(series[i], key, values.get(i));
            }
            md.append(" |\n");
        });
        LaneReport.write("admin", md.toString(), chart, "GET /lanes and GET /lanes/{domain} latency per size");
    }

    private static String domain(int d) {
        return "d" + d + ".scale.test";
    }

    /** Enqueues MAILS mails, mail i to domain i % DOMAINS, 64 at a time. */
    private static void fill(LaneSpool spool) {
        Flux.range(0, MAILS)
            .flatMap(i -> Mono.fromCallable(() -> {
                MailImpl mail = TestMails.mail("scale" + i, TestMails.messageId("scale", i), "r" + i + "@" + domain(i % DOMAINS));
                try {
                    spool.enqueue(mail);
                } finally {
                    mail.dispose();
                }
                return i;
            }).subscribeOn(Schedulers.boundedElastic()), 64)
            .blockLast(TIMEOUT);
    }

    /** The first HISTOGRAM lines of this JVM's live class histogram (jcmd GC.class_histogram). */
    private static void printHistogram(String when) throws Exception {
        if (HISTOGRAM <= 0) {
            return;
        }
        javax.management.ObjectName command = new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand");
        String histogram = (String) java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(command,
            "gcClassHistogram", new Object[] {new String[0]}, new String[] {String[].class.getName()});
        System.out.println("AdminAtScaleE2ETest: live class histogram, " + when + ":");
        histogram.lines().limit(HISTOGRAM + 2L).forEach(System.out::println);
    }

    private interface Request {
        void run() throws Exception;
    }

    /** Runs {@code request} {@code times} times; the durations in ns, sorted. */
    private static long[] time(Request request, int times) throws Exception {
        long[] nanos = new long[times];
        for (int i = 0; i < times; i++) {
            long start = System.nanoTime();
            request.run();
            nanos[i] = System.nanoTime() - start;
        }
        Arrays.sort(nanos);
        return nanos;
    }
}
