package org.jameskvs.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Store-ack latency at 10 %, 50 % and 80 % of each target's maximum rate, in one run, one target
 * after the other: start the target's server process(es), warm up closed loop (so the JIT has compiled
 * the hot paths of client and servers before anything is timed), measure its max (closed loop, or take
 * it from {@code --max}), then for each fraction warm up at that rate and measure ({@link LatencyAtRate}:
 * open loop, coordinated omission corrected, every ack's status checked). Prints one table (p50, p90,
 * p99, p99.9, max, achieved rate, errors, load average) and, per row, its failures and its worst
 * slow-ack episodes (with UTC times, to line up with server logs and JFR recordings).
 * <pre>
 * java --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
 *      -cp jmh-benchmarks/target/benchmarks.jar org.jameskvs.bench.LatencyReport \
 *      [--targets kvs,kvs-2copies,redis-aof] [--percents 10,50,80] [--seconds 10] [--warmup 3] \
 *      [--jit-warmup 10] [--max-seconds 5] [--size 1024] [--max kvs=300000,...] [--out report/latency.md]
 * </pre>
 * Targets: see {@link StoreDeleteTarget#create}. Every loop is bounded (see {@link LatencyAtRate}).
 */
public final class LatencyReport {
    /** One table row: a target at one fraction of its max. */
    public record Row(String target, int percent, double maxRate, LatencyAtRate.Result result, String loadBefore,
                      String loadAfter, List<String> serverMeters) {
    }

    private LatencyReport() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = options(args);
        List<String> targets = List.of(opts.getOrDefault("targets", "kvs,kvs-2copies,redis-aof").split(","));
        int[] percents = Arrays.stream(opts.getOrDefault("percents", "10,50,80").split(",")).mapToInt(Integer::parseInt).toArray();
        int seconds = Integer.parseInt(opts.getOrDefault("seconds", "10"));
        int warmup = Integer.parseInt(opts.getOrDefault("warmup", "3"));
        int maxSeconds = Integer.parseInt(opts.getOrDefault("max-seconds", "5"));
        int jitWarmup = Integer.parseInt(opts.getOrDefault("jit-warmup", "10"));
        int size = Integer.parseInt(opts.getOrDefault("size", "1024"));
        Map<String, Double> givenMax = new LinkedHashMap<>();
        if (opts.containsKey("max")) {
            for (String kv : opts.get("max").split(",")) {
                String[] p = kv.split("=", 2);
                givenMax.put(p[0], Double.parseDouble(p[1]));
            }
        }
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        List<Row> rows = run(targets, percents, seconds, warmup, jitWarmup, maxSeconds, size, givenMax);
        String md = markdown(rows, size, seconds);
        System.out.println();
        System.out.println(md);
        if (opts.containsKey("out")) {
            Path out = Path.of(opts.get("out"));
            if (out.getParent() != null) {
                Files.createDirectories(out.getParent());
            }
            Files.writeString(out, "# Store-ack latency at fixed offered rates\n\n" + started + " to "
                    + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", " + Runtime.getRuntime().availableProcessors()
                    + " cores. Command: `LatencyReport " + String.join(" ", args) + "`\n\n" + md);
            System.out.println("written to " + out.toAbsolutePath());
        }
    }

    /** Measures every target at every fraction of its max; the suite behind this report and {@link BenchmarkReport}. */
    public static List<Row> run(List<String> targets, int[] percents, int seconds, int warmup, int jitWarmup,
                                int maxSeconds, int size, Map<String, Double> givenMax) throws Exception {
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'y');
        List<Row> rows = new ArrayList<>();
        for (String name : targets) {
            StoreDeleteTarget.durability(name); // an unknown name fails before anything starts
            try (StoreDeleteTarget target = StoreDeleteTarget.create(name)) {
                MaxRate.drive(target, body, "jit-", jitWarmup);
                String load = LoadAverage.oneMinute();
                double max = givenMax.containsKey(name) ? givenMax.get(name)
                        : MaxRate.measure(target, body, "max-", 1, maxSeconds);
                System.out.printf("%s: max %,.0f tx/s (%s; load %s)%n", name, max,
                        givenMax.containsKey(name) ? "given" : "measured", load);
                for (int percent : percents) {
                    int rate = (int) Math.max(1, Math.round(max * percent / 100.0));
                    Map<String, Long> pids = new LinkedHashMap<>();
                    pids.put("client", ProcessHandle.current().pid());
                    List<Process> serverProcs = target.serverProcesses();
                    for (int i = 0; i < serverProcs.size(); i++) {
                        pids.put("server" + (i + 1), serverProcs.get(i).pid());
                    }
                    if (warmup > 0) {
                        warmUp(target, body, percent, rate, warmup, pids);
                    }
                    String before = LoadAverage.oneMinute();
                    List<ServerTimers.Snapshot> metersBefore = target.metricsPorts().stream().map(ServerTimers::scrape).toList();
                    ThreadSched.Snapshot schedBefore = ThreadSched.take(pids);
                    long[] gcBefore = clientGc();
                    long t0 = System.nanoTime();
                    LatencyAtRate.Result r = LatencyAtRate.run(target, body, "m" + percent + "-", rate, seconds);
                    double elapsed = (System.nanoTime() - t0) / 1e9;
                    ThreadSched.Snapshot schedAfter = ThreadSched.take(pids);
                    List<String> meters = new ArrayList<>();
                    for (int i = 0; i < metersBefore.size(); i++) {
                        meters.add("server " + (i + 1) + ": " + ServerTimers.describe(metersBefore.get(i),
                                ServerTimers.scrape(target.metricsPorts().get(i)), elapsed));
                    }
                    long[] gcAfter = clientGc();
                    meters.add(String.format("client JVM GC: %d collections, %d ms", gcAfter[0] - gcBefore[0], gcAfter[1] - gcBefore[1]));
                    meters.addAll(ThreadSched.describe(schedBefore, schedAfter, 8));
                    Row row = new Row(name, percent, max, r, before, LoadAverage.oneMinute(), meters);
                    rows.add(row);
                    System.out.println("  " + line(row));
                    meters.forEach(m -> System.out.println("    " + m));
                    System.out.printf("    sender lateness p99 %.2f ms, max %.1f ms%n", r.sendLag().getValueAtPercentile(99) / 1e6,
                            r.sendLag().getMaxValue() / 1e6);
                    r.slowEpisodes().forEach(e -> System.out.println("    " + e));
                }
            }
        }
        return rows;
    }

    /** Warm-up rounds at most per row (each {@code warmup} seconds at the row's rate). */
    static final int MAX_WARMUP_ROUNDS = 8;
    /** The JIT counts as settled when the compiler threads of all the target's JVMs used at most this share of a round. */
    static final double JIT_SETTLED_SHARE = 0.01;

    /**
     * Warms up at the row's rate until the JIT compilers of the client and the servers are quiet: a
     * compilation still running when the row starts competes with the request path for the two cores
     * (2026-11-24, at load 10-25: the client's C2 thread used 1.4-1.6 s of CPU inside a 10 s row after
     * 13 s of warm-up). Rounds of {@code warmup} seconds, at most {@value #MAX_WARMUP_ROUNDS}, until a
     * round's compiler CPU (all processes, from schedstat) is at most 1 % of the round's span.
     */
    private static void warmUp(StoreDeleteTarget target, byte[] body, int percent, int rate, int warmup,
                               Map<String, Long> pids) {
        for (int round = 1; round <= MAX_WARMUP_ROUNDS; round++) {
            ThreadSched.Snapshot s0 = ThreadSched.take(pids);
            LatencyAtRate.run(target, body, "w" + percent + "-" + round + "-", rate, warmup);
            ThreadSched.Snapshot s1 = ThreadSched.take(pids);
            long jit = ThreadSched.compilerNanos(s0, s1);
            double span = s1.nanoTime() - s0.nanoTime();
            System.out.printf("    warm-up round %d at %,d tx/s: JIT compilers %.0f ms of CPU%n", round, rate, jit / 1e6);
            if (jit <= JIT_SETTLED_SHARE * span) {
                return;
            }
        }
        System.out.printf("    the JIT was still compiling after %d warm-up rounds: measured anyway%n", MAX_WARMUP_ROUNDS);
    }

    /** The benchmark JVM's own GC: collections and their accumulated time (ms), all collectors. */
    private static long[] clientGc() {
        long n = 0;
        long ms = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
            ms += Math.max(0, gc.getCollectionTime());
        }
        return new long[]{n, ms};
    }

    static String markdown(List<Row> rows, int size, int seconds) {
        StringBuilder md = new StringBuilder();
        md.append(String.format("## Store-ack latency at a fixed offered rate (%s, open loop, one connection, %d s per row)%n%n",
                size % 1024 == 0 ? size / 1024 + " KB" : size + " B", seconds));
        md.append("Latency from each store's intended send time to its OK ack (coordinated omission corrected); "
                + "errors = stores not answered OK (never a latency sample) plus transactions not sent; "
                + "achieved = OK acks inside the window per second.\n\n");
        md.append("| target | durability | % of max | offered tx/s | achieved tx/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | load avg |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row row : rows) {
            md.append("| ").append(line(row)).append(" |\n");
        }
        md.append(comparison(rows));
        StringBuilder notes = new StringBuilder();
        for (Row row : rows) {
            LatencyAtRate.Result r = row.result();
            notes.append(String.format("- %s at %d %%: %,d acks over 2 ms; the sender's own lateness p99 %.2f ms, max %.1f ms",
                    row.target(), row.percent(), r.slowAcks(), r.sendLag().getValueAtPercentile(99) / 1e6,
                    r.sendLag().getMaxValue() / 1e6));
            r.failures().forEach((k, v) -> notes.append("; ").append(k).append(": ").append(v));
            notes.append('\n');
            row.serverMeters().forEach(m -> notes.append("  - ").append(m).append('\n'));
            r.slowEpisodes().forEach(e -> notes.append("  - ").append(e).append('\n'));
        }
        md.append("\nPer row: failures by kind, the KVS servers' own meters over the row (I/O thread time in blocks "
                + "and group commits, GC pauses), and the worst slow-ack episodes (UTC):\n\n").append(notes);
        return md.toString();
    }

    /** p99 of each KVS target against Redis AOF everysec's at the same fraction of each one's own max. */
    private static String comparison(List<Row> rows) {
        Map<Integer, Row> redis = new LinkedHashMap<>();
        rows.stream().filter(r -> r.target().equals("redis-aof")).forEach(r -> redis.put(r.percent(), r));
        StringBuilder out = new StringBuilder();
        for (Row row : rows) {
            Row base = redis.get(row.percent());
            if (base == null || !row.target().startsWith("kvs")) {
                continue;
            }
            double kvs = row.result().percentileMillis(99);
            double aof = base.result().percentileMillis(99);
            boolean cleanRows = row.result().errors() == 0 && base.result().errors() == 0;
            out.append(String.format("| %s | %d %% | %.2f | %.2f | %s |%n", row.target(), row.percent(), kvs, aof,
                    !cleanRows ? "- (errors)" : kvs < aof ? "yes" : "no"));
        }
        return out.isEmpty() ? "" : "\n| target | % of max | p99 ms | redis-aof p99 ms (same %) | below Redis AOF |\n"
                + "|---|---:|---:|---:|---|\n" + out;
    }

    private static String line(Row row) {
        LatencyAtRate.Result r = row.result();
        return String.format("%s | %s | %d %% of %,.0f | %,d | %,.0f | %.2f | %.2f | %.2f | %.2f | %.1f | %,d | %s→%s",
                row.target(), StoreDeleteTarget.durability(row.target()).label(), row.percent(), row.maxRate(),
                r.offeredRate(), r.achievedRate(), r.percentileMillis(50), r.percentileMillis(90),
                r.percentileMillis(99), r.percentileMillis(99.9), r.maxMillis(), r.errors(), row.loadBefore(),
                row.loadAfter());
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got: " + String.join(" ", args));
            }
            opts.put(args[i].substring(2), args[++i]);
        }
        return opts;
    }
}
