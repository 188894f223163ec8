package org.jameskvs.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.server.core.MailImpl;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.jameskvs.delivery.LaneDeliveryConfig;
import org.jameskvs.delivery.LaneRegistry;
import org.jameskvs.delivery.LaneSpool;
import org.jameskvs.delivery.MxResolver;
import org.jameskvs.delivery.TestConfigs;
import org.jameskvs.delivery.TestMails;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.ReportChart;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Issue 13's "delays at scale" on real parts, measured so that the machine's load drift cancels out.
 *
 * <p>Two identical lane engines run in this JVM, each a {@link LaneSpool} on its own real KVS server
 * process through its own KVS client: engine <i>backlog</i>, whose first delay tier holds
 * {@code lanes.delayed} (default 20,000) mails due in an hour, and engine <i>empty</i>, with none. A
 * ready flow ({@code lanes.ready} mails, default 3,000) goes through one engine's lane to the same
 * accepting domain of the same SMTP target. {@code lanes.rounds} rounds (default 3, as CI runs it; the reports' runs used 6 or 10) each run one flow
 * per engine, in alternating order (empty first, then backlog first, ...; after one uncounted flow
 * each, as the backlog is still being written back to disk), so both conditions see the same machine
 * within a few seconds of each other; a round's ratio is its backlog flow's mails/s over
 * its empty flow's, and the figure is the median ratio. Per flow also: this JVM's CPU time per ready
 * mail and the serving KVS server's CPU time per ready mail (from /proc), less sensitive to load than
 * mails/s.
 *
 * <p>Why a second engine on a second server, not the same engine before and after the backlog: a
 * backlog could cost the ready flow (1) on the KVS server that holds it: its single journal shared by
 * all queues, its in-memory index and id table sized by the backlog, its compaction of journal files
 * the backlog keeps alive; (2) in the engine: the delay tier's reader and mover, which hold its head
 * while it is not due; (3) in this JVM's heap. The backlog flow's mail is written to and read from the
 * server holding the backlog, through the engine whose tier mover holds its head, so (1) and (2) are
 * on its path and absent from the empty engine's; the rounds compare the two. (3) is shared by both
 * engines (one JVM) and is measured apart: the live heap with and without the backlog, asserted within
 * the issue's budget (64 MB per 1,000,000 delayed mails).
 *
 * <p>Set-up bias: with only engine <i>backlog</i>'s server storing the backlog, that server had just
 * run N more PUTs than the other one before the rounds, and the backlog engine was the faster one in 9
 * of 10 rounds at 1,000,000 (median 1.12x), which the backlog cannot cause. So both servers now store
 * the N mails the same way ({@code lanes.fillBoth}, default true), the empty engine's first, and the
 * empty engine's are then cleared (one CLEAR; the server deletes the dead journal files meanwhile),
 * before the uncounted flows and the rounds. Issue 13's 1 % is counted, not timed, in
 * {@link SuspendedLaneCostE2ETest}.
 *
 * <p>Asserted (no timing): no delayed mail leaves its delay queue early (all still there, none
 * arrived), every ready mail arrives exactly once, the heap bound. The per-round figures are printed
 * and written (lanes-delays.md and its chart lanes-delays.png, {@link LaneReport}).
 *
 * <p>The delayed mails are put into the delay queue directly (as {@code DelayTiers.park} stores a
 * mail after its first temporary failure: the mail with its due time), not by failing deliveries, to
 * reach the size in reasonable time. One million: {@code -Dlanes.delayed=1000000}.
 *
 * <p>Issue 13's second target, "a suspended lane holding 1,000,000 mails costs at most 1 % of dequeue
 * capacity", is the same measurement with another backlog ({@link Backlog#SUSPENDED}): both engines
 * have a second dedicated lane, {@code held.test}, suspended for a day through the engine's API (as
 * {@code PUT /lanes/held.test/suspension} does) before any mail; only engine <i>backlog</i> holds
 * {@code lanes.suspended} (default 20,000) mails in it, stored into its lane queue directly. Its worker
 * holds the lane's first mails (at most its concurrency), waiting for the suspension to end, and reads
 * no more. Asserted: none of them delivered, all still in the lane queue, the same heap bound; written
 * to lanes-suspended.md and .png. One million: {@code -Dlanes.suspended=1000000}.
 */
class DelayedBacklogE2ETest {
    private static final int READY = Integer.getInteger("lanes.ready", 3_000);
    private static final int ROUNDS = Integer.getInteger("lanes.rounds", 3);
    /**
     * Both engines' servers store the backlog; the empty engine's is cleared before the rounds (default
     * true; false: only the backlog engine's server stores it, as measured before 2026-11-24 21:50).
     */
    private static final boolean FILL_BOTH = Boolean.parseBoolean(System.getProperty("lanes.fillBoth", "true"));
    private static final String DOMAIN = "ready.test";
    /** The suspended lane's domain (Backlog.SUSPENDED only). */
    private static final String HELD = "held.test";
    /** DelayTiers' attribute: when the mail is due (epoch ms). */
    private static final AttributeName DUE_AT = AttributeName.of("org.jameskvs.delivery.dueAtEpochMillis");
    private static final long ISSUE_BUDGET_BYTES_PER_BACKLOG_MAIL = 64L * 1024 * 1024 / 1_000_000;
    private static final Duration TIMEOUT = Duration.ofMinutes(30);
    /** Linux's USER_HZ (the unit of /proc/[pid]/stat's utime and stime): 100 on every common build. */
    private static final double PROC_TICKS_PER_SECOND = 100;

    /** What engine <i>backlog</i> holds and engine <i>empty</i> does not. */
    private enum Backlog {
        /** Mails due in an hour in the first delay tier. */
        DELAYED("delayed", "delays", Integer.getInteger("lanes.delayed", 20_000),
            "mails due in an hour in its first delay tier"),
        /** Mails in a dedicated lane suspended (by an administrator, for a day) before they arrive. */
        SUSPENDED("suspended", "suspended", Integer.getInteger("lanes.suspended", 20_000),
            "mails in the lane of " + HELD + " (suspended for a day on both engines before they arrived)");

        final String kind;
        final String reportName;
        final int count;
        final String held;

        Backlog(String kind, String reportName, int count, String held) {
            this.kind = kind;
            this.reportName = reportName;
            this.count = count;
            this.held = held;
        }
    }

    /** One lane engine on its own KVS server. */
    private record Engine(String name, KvsServerProcess kvs, KvsLaneQueues queues, LaneSpool spool, LaneRegistry registry)
        implements AutoCloseable {
        @Override
        public void close() throws Exception {
            try (queues) {
                spool.close();
            }
        }
    }

    /** One ready flow: mails/s, and CPU micro-seconds per ready mail of this JVM and of the serving KVS server. */
    private record Flow(double mailsPerSecond, double jvmCpuMicrosPerMail, double serverCpuMicrosPerMail) {
    }

    @Test
    void aDelayedBacklogCostsTheReadyFlowLittleAndTheHeapNothingPerMail() throws Exception {
        measure(Backlog.DELAYED);
    }

    @Test
    void aSuspendedLaneHoldingMailCostsTheReadyFlowLittleAndTheHeapNothingPerMail() throws Exception {
        measure(Backlog.SUSPENDED);
    }

    private static void measure(Backlog kind) throws Exception {
        int count = kind.count;
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve(kind.kind + "-" + System.currentTimeMillis());
        Files.createDirectories(run);
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put(DOMAIN, Behaviour.accept());
        behaviours.put(HELD, Behaviour.accept()); // would take the suspended lane's mail, if any were sent
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours);
             KvsServerProcess backlogKvs = KvsServerProcess.start(run.resolve("kvs-backlog"));
             KvsServerProcess emptyKvs = KvsServerProcess.start(run.resolve("kvs-empty"));
             Engine backlog = engine("backlog", backlogKvs, target, kind);
             Engine empty = engine("empty", emptyKvs, target, kind)) {
            ManageableMailQueue backlogQueue = (ManageableMailQueue) (kind == Backlog.DELAYED
                ? backlog.spool().delayQueues().get(0)
                : laneQueue(backlog.spool(), HELD));
            int[] delivered = {0};
            // JIT, connections: not part of any figure
            flow(backlog, target, "warm-up-backlog", delivered);
            flow(empty, target, "warm-up-empty", delivered);
            long heapEmpty = liveHeap();

            if (FILL_BOTH) {
                // the same set-up work on the empty engine's server, then its backlog cleared: both servers have
                // stored N mails before the rounds (see the class comment)
                ManageableMailQueue emptyQueue = (ManageableMailQueue) (kind == Backlog.DELAYED
                    ? empty.spool().delayQueues().get(0)
                    : laneQueue(empty.spool(), HELD));
                fill(kind, emptyQueue, count, "cleared-");
                emptyQueue.clear();
                Waits.until(() -> sizeOf(emptyQueue) == 0, "the empty engine's backlog cleared", TIMEOUT);
            }
            long parkStart = System.nanoTime();
            fill(kind, backlogQueue, count, "");
            double parkSeconds = (System.nanoTime() - parkStart) / 1e9;
            long heapDelayed = liveHeap();

            // one flow each, not counted: the first flow after the backlog was written ran while the machine
            // wrote it back to disk (in two runs the round right after it was the outlier, 1.26x and 2.01x)
            flow(empty, target, "settle-empty", delivered);
            flow(backlog, target, "settle-backlog", delivered);
            List<Flow[]> rounds = new ArrayList<>(); // [0] empty engine, [1] backlog engine
            for (int round = 0; round < ROUNDS; round++) {
                Flow[] flows = new Flow[2];
                boolean emptyFirst = round % 2 == 0;
                for (int leg = 0; leg < 2; leg++) {
                    boolean onEmpty = (leg == 0) == emptyFirst;
                    Engine engine = onEmpty ? empty : backlog;
                    flows[onEmpty ? 0 : 1] = flow(engine, target, engine.name() + "-" + round, delivered);
                }
                rounds.add(flows);
                System.out.printf("DelayedBacklogE2ETest (" + kind.kind + ") round %d (%s first): %.0f mails/s without the backlog, %.0f with it"
                        + " (%.3fx); JVM CPU %.0f / %.0f us per mail; KVS server CPU %.0f / %.0f us per mail%n",
                    round + 1, emptyFirst ? "empty" : "backlog", flows[0].mailsPerSecond(), flows[1].mailsPerSecond(),
                    flows[1].mailsPerSecond() / flows[0].mailsPerSecond(), flows[0].jvmCpuMicrosPerMail(),
                    flows[1].jvmCpuMicrosPerMail(), flows[0].serverCpuMicrosPerMail(), flows[1].serverCpuMicrosPerMail());
            }
            long heapAfter = liveHeap();
            long stillDelayed = backlogQueue.getSize();

            report(kind, rounds, parkSeconds, heapEmpty, heapDelayed, heapAfter, stillDelayed);
            assertThat(stillDelayed).as("%s mails still waiting", kind.kind).isEqualTo(count);
            assertThat(target.domain(DOMAIN).messageIds()).as("arrived mails").noneMatch(id -> id.startsWith("<delayed-") || id.startsWith("<cleared-"));
            assertThat(target.domain(HELD).accepted()).as("mails of the suspended lane delivered (either engine)").isZero();
            if (kind == Backlog.SUSPENDED) {
                assertThat(backlog.registry().suspensionFor(HELD).orElseThrow().remaining()).as("still suspended").isPositive();
            }
            assertThat(target.domain(DOMAIN).distinctMessageIds()).as("ready mails arrived").isEqualTo(delivered[0]);
            assertThat(target.domain(DOMAIN).accepted()).as("ready mails accepted (each once)").isEqualTo(delivered[0]);
            assertThat(heapDelayed - heapEmpty).as("heap growth with %,d %s mails", count, kind.kind)
                .isLessThanOrEqualTo(ISSUE_BUDGET_BYTES_PER_BACKLOG_MAIL * count);
        }
    }

    /** Stores the backlog of {@code kind} ({@code count} mails) into {@code queue}, names prefixed by {@code prefix}. */
    private static void fill(Backlog kind, MailQueue queue, int count, String prefix) {
        if (kind == Backlog.DELAYED) {
            park(queue, count, prefix + "delayed", DOMAIN, System.currentTimeMillis() + Duration.ofHours(1).toMillis());
        } else {
            park(queue, count, prefix + "held", HELD, null);
        }
    }

    private static long sizeOf(ManageableMailQueue queue) {
        try {
            return queue.getSize();
        } catch (Exception e) {
            return -1;
        }
    }

    /** With {@code Backlog.SUSPENDED}, a second dedicated lane (HELD), suspended before any mail. */
    private static Engine engine(String name, KvsServerProcess kvs, DomainSmtpTarget target, Backlog kind) {
        LaneDeliveryConfig config = TestConfigs.config(
            "dedicatedDomains", kind == Backlog.SUSPENDED ? DOMAIN + "," + HELD : DOMAIN, "buckets", "1",
            "concurrency", "8", "initialConcurrency", "8", "maxDeliveriesPerConnection", "1000",
            "retryDelays", "3600000", "port", String.valueOf(target.port()));
        MxResolver resolver = domain -> List.of(target.domain(domain).address());
        KvsLaneQueues queues = KvsLaneQueues.connect(kvs, "delayed-bench-" + name);
        try {
            LaneRegistry registry = new LaneRegistry();
            Engine engine = new Engine(name, kvs, queues, new LaneSpool(config, queues.factory(), resolver, (mail, reply) -> { },
                registry, Clock.systemUTC()), registry);
            if (kind == Backlog.SUSPENDED) { // what PUT /lanes/held.test/suspension?duration=1d does (LaneRoutes)
                registry.suspensionFor(HELD).orElseThrow().suspend(Duration.ofDays(1), "suspended by an administrator");
            }
            return engine;
        } catch (RuntimeException e) {
            try {
                queues.close();
            } catch (Exception closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /**
     * Enqueues {@code READY} mails to the accepting domain through {@code engine}; mails/s from the first
     * enqueue to the last arrival, and the CPU spent meanwhile per mail.
     */
    private static Flow flow(Engine engine, DomainSmtpTarget target, String tag, int[] delivered) throws Exception {
        long jvmCpuStart = jvmCpuNanos();
        long serverTicksStart = processTicks(engine.kvs().pid());
        long start = System.nanoTime();
        for (int i = 0; i < READY; i++) {
            MailImpl mail = TestMails.mail(tag + i, TestMails.messageId(tag, i), "r" + i + "@" + DOMAIN);
            engine.spool().enqueue(mail);
            mail.dispose();
        }
        int expected = delivered[0] + READY;
        Waits.until(() -> target.domain(DOMAIN).distinctMessageIds() == expected, READY + " ready mails delivered (" + tag + ")", TIMEOUT);
        double seconds = (System.nanoTime() - start) / 1e9;
        delivered[0] = expected;
        double jvmCpuMicros = (jvmCpuNanos() - jvmCpuStart) / 1e3;
        double serverCpuMicros = (processTicks(engine.kvs().pid()) - serverTicksStart) / PROC_TICKS_PER_SECOND * 1e6;
        return new Flow(READY / seconds, jvmCpuMicros / READY, serverCpuMicros / READY);
    }

    private static void report(Backlog kind, List<Flow[]> rounds, double parkSeconds, long heapEmpty, long heapDelayed, long heapAfter,
                               long stillDelayed) throws Exception {
        List<Double> ratios = new ArrayList<>();
        List<Double> jvmCpuRatios = new ArrayList<>();
        List<Double> serverCpuRatios = new ArrayList<>();
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < rounds.size(); i++) {
            Flow without = rounds.get(i)[0];
            Flow with = rounds.get(i)[1];
            double ratio = with.mailsPerSecond() / without.mailsPerSecond();
            ratios.add(ratio);
            jvmCpuRatios.add(with.jvmCpuMicrosPerMail() / without.jvmCpuMicrosPerMail());
            serverCpuRatios.add(with.serverCpuMicrosPerMail() / without.serverCpuMicrosPerMail());
            rows.append(String.format("| %d (%s first) | %.0f | %.0f | **%.2fx** | %.0f / %.0f | %.0f / %.0f |%n", i + 1,
                i % 2 == 0 ? "empty" : "backlog", without.mailsPerSecond(), with.mailsPerSecond(), ratio,
                without.jvmCpuMicrosPerMail(), with.jvmCpuMicrosPerMail(), without.serverCpuMicrosPerMail(),
                with.serverCpuMicrosPerMail()));
        }
        double median = median(ratios);
        double jvmCpu = median(jvmCpuRatios);
        double serverCpu = median(serverCpuRatios);
        // the issue's "cost of dequeue capacity": capacity lost with the backlog, from mails/s and from CPU per mail
        String cost = String.format("cost (1 - ratio) %.1f %%; from CPU per ready mail (1 - without / with) JVM %.1f %%, KVS server %.1f %%",
            (1 - median) * 100, (1 - 1 / jvmCpu) * 100, (1 - 1 / serverCpu) * 100);
        ReportChart chart = ReportChart.bars(String.format("Ready flow (%,d mails per flow) with / without %,d %s mails: median %.2fx",
            READY, kind.count, kind.kind, median), "round", "ready mails/s");
        for (int i = 0; i < rounds.size(); i++) {
            chart.bar("no backlog", "round " + (i + 1), rounds.get(i)[0].mailsPerSecond())
                .bar(String.format("%,d %s", kind.count, kind.kind), "round " + (i + 1), rounds.get(i)[1].mailsPerSecond());
        }
        String summary = String.format("%,d %s mails stored in %.1f s; %d rounds of %,d ready mails per engine:"
                + " median ratio (with / without the backlog) %.3fx (rounds %s); CPU per ready mail, with / without:"
                + " this JVM median %.3fx, KVS server median %.3fx; %s; live heap %.1f MB empty, %.1f MB with them (%+.1f bytes"
                + " per %s mail), %.1f MB after the rounds; %,d still in the %s queue",
            kind.count, kind.kind, parkSeconds, rounds.size(), READY, median, ratios.stream().map(r -> String.format("%.2f", r)).toList(),
            jvmCpu, serverCpu, cost, heapEmpty / 1e6, heapDelayed / 1e6,
            (heapDelayed - heapEmpty) / (double) kind.count, kind.kind, heapAfter / 1e6, stillDelayed, kind.kind);
        System.out.println("DelayedBacklogE2ETest: " + summary);
        String title = kind == Backlog.DELAYED ? "Delayed mail at scale" : "A suspended lane holding mail";
        LaneReport.write(kind.reportName, String.format("# %s (DelayedBacklogE2ETest)%n%n"
                + "Two identical lane engines, each on its own KVS server process; one holds %,d %s"
                + " (stored in %.1f s)%s. Each round runs a ready flow of %,d mails through each"
                + " engine, the order alternating.%n%n"
                + "| round | mails/s without | mails/s with | ratio | JVM CPU us/mail without / with | KVS server CPU us/mail without / with |%n"
                + "|---|---|---|---|---|---|%n%s%n"
                + "**Median ratio %.2fx** (CPU per ready mail, with / without: JVM %.2fx, KVS server %.2fx); %s. Live heap"
                + " %.1f MB -> %.1f MB with the backlog; %,d still %s. Load average at the end: %.1f on %d cores.%n",
                title, kind.count, kind.held, parkSeconds, FILL_BOTH ? "; the other engine's server stored as many the same way"
                    + " first, cleared before the rounds (lanes.fillBoth)" : "", READY, rows, median, jvmCpu, serverCpu, cost, heapEmpty / 1e6,
                heapDelayed / 1e6, stillDelayed, kind.kind, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors()),
            chart, "ready throughput per round, with and without the " + kind.kind + " backlog");
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** This JVM's CPU time (every thread, the SMTP target's included), ns. */
    private static long jvmCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** utime + stime of process {@code pid} in clock ticks (/proc/[pid]/stat fields 14 and 15); -1 without /proc. */
    private static long processTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // fields 14 and 15, counted from 3
        } catch (Exception e) {
            return -1;
        }
    }

    /**
     * Stores {@code count} mails to {@code domain} in {@code queue} (64 enqueues in flight), each due at
     * {@code dueAt} (epoch ms, as DelayTiers parks a mail) unless null.
     */
    private static void park(MailQueue queue, int count, String tag, String domain, Long dueAt) {
        Flux.range(0, count)
            .flatMap(i -> Mono.fromCallable(() -> {
                MailImpl mail = TestMails.mail(tag + i, TestMails.messageId(tag, i), "d" + i + "@" + domain);
                if (dueAt != null) {
                    mail.setAttribute(new Attribute(DUE_AT, AttributeValue.of(dueAt)));
                }
                return mail;
            }).flatMap(mail -> Mono.from(queue.enqueueReactive(mail)).doFinally(s -> mail.dispose())), 64)
            .blockLast(TIMEOUT);
    }

    /** The lane queue of {@code domain}'s lane. */
    private static MailQueue laneQueue(LaneSpool spool, String domain) {
        String name = spool.router().laneOf(domain).queueName().asString();
        return spool.queues().stream().filter(queue -> queue.getName().asString().equals(name)).findFirst().orElseThrow();
    }

    private static long liveHeap() throws InterruptedException {
        return KvsLaneQueues.liveHeap();
    }
}
