package org.jameskvs.spoolbench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The load side of {@code bin/benchmark}: drives one mail system (James with some queue, or Postfix)
 * already started by the script, over SMTP on 127.0.0.1, and appends what it measured to a results
 * file that {@link SpoolReport} turns into the report.
 *
 * <p>{@code SpoolBench run --system S --label L --port P --sink-stats FILE --results FILE [options]}:
 * <ol>
 *   <li>warm-up: {@code --warmup N} mails (closed loop, at most {@code --warmup-max-seconds});</li>
 *   <li>max: {@code --sessions} sessions (default 20) each sending back to back for {@code --seconds}:
 *       mails/s accepted (250 to the final dot), mails/s delivered end to end (the sink's count, from the
 *       first send until the last accepted mail of the phase reached the sink), response time of the
 *       mail transaction (MAIL FROM up to the reply to the final dot: avg, p50, p99, max), CPU seconds
 *       per process ({@code --procs name=pid,...}, from /proc, descendants included) over that window;</li>
 *   <li>sweep ({@code --sweep 0.2,0.4,...}): open loop at those fractions of the measured max accepted
 *       rate, {@code --sweep-seconds} each; each session sends on a fixed schedule, so the offered rate
 *       does not depend on the response time;</li>
 *   <li>end: heap (jcmd GC.heap_info before and after a full GC) and RSS of {@code --heap-pid}; with
 *   {@code --heap-histogram FILE} also the class histogram of the live heap.</li>
 * </ol>
 * Before each measured phase the previous phase's mail is drained (the sink has every accepted mail).
 * Every phase and every wait is bounded.
 */
public final class SpoolBench {
    private static final int TIMEOUT_MILLIS = 30_000;

    private final Map<String, String> opts;
    private final String host;
    private final int port;
    private final int sessions;
    private final Path sinkStats;
    private final Path results;
    private final String prefix;
    private final Map<String, Long> procs = new LinkedHashMap<>();
    private final ProcStats procStats;
    private final double drainSeconds;
    private final MailMix mix;
    private long totalAccepted;

    private SpoolBench(Map<String, String> opts) {
        this.opts = opts;
        this.host = opts.getOrDefault("host", "127.0.0.1");
        this.port = Integer.parseInt(required("port"));
        this.sessions = Integer.parseInt(opts.getOrDefault("sessions", "20"));
        this.sinkStats = Path.of(required("sink-stats"));
        this.results = Path.of(required("results"));
        this.prefix = opts.getOrDefault("system", "x") + "-" + opts.getOrDefault("start", "1") + "-" + System.currentTimeMillis();
        this.procStats = new ProcStats(Double.parseDouble(opts.getOrDefault("clk-tck", "100")));
        this.drainSeconds = Double.parseDouble(opts.getOrDefault("drain-seconds", "180"));
        this.mix = new MailMix(opts.getOrDefault("mix", MailMix.PAPER));
        for (String p : opts.getOrDefault("procs", "").split(",")) {
            if (p.contains("=")) {
                procs.put(p.substring(0, p.indexOf('=')), Long.parseLong(p.substring(p.indexOf('=') + 1)));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: SpoolBench run --port P --sink-stats F --results F [...] | SpoolBench report [...]");
            System.exit(2);
        }
        Map<String, String> opts = parse(Arrays.copyOfRange(args, 1, args.length));
        switch (args[0]) {
            case "run" -> System.exit(new SpoolBench(opts).run());
            case "report" -> SpoolReport.main(opts);
            default -> {
                System.err.println("unknown command " + args[0]);
                System.exit(2);
            }
        }
    }

    /** The "Total" line of {@code jcmd GC.class_histogram}, in MiB; NaN when absent. */
    static double histogramTotalMiB(String histogram) {
        for (String line : histogram.split("\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length == 3 && fields[0].equals("Total")) {
                return Long.parseLong(fields[2]) / (1024.0 * 1024.0);
            }
        }
        return Double.NaN;
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option, got " + args[i]);
            }
            String key = args[i].substring(2);
            opts.put(key, i + 1 < args.length && !args[i + 1].startsWith("--") ? args[++i] : "true");
        }
        return opts;
    }

    private String required(String key) {
        String v = opts.get(key);
        if (v == null) {
            throw new IllegalArgumentException("--" + key + " is required");
        }
        return v;
    }

    private int run() throws Exception {
        String system = opts.getOrDefault("system", "system");
        int warmup = Integer.parseInt(opts.getOrDefault("warmup", "10000"));
        double warmupMax = Double.parseDouble(opts.getOrDefault("warmup-max-seconds", "120"));
        double seconds = Double.parseDouble(opts.getOrDefault("seconds", "20"));
        double sweepSeconds = Double.parseDouble(opts.getOrDefault("sweep-seconds", "15"));
        List<Double> sweep = new ArrayList<>();
        for (String s : opts.getOrDefault("sweep", "").split(",")) {
            if (!s.isBlank()) {
                sweep.add(Double.parseDouble(s.trim()));
            }
        }
        log(system + ": warm-up, " + warmup + " mails (at most " + warmupMax + " s)");
        if (warmup > 0) {
            Phase w = phase("warmup", 0, warmup, warmupMax, 0);
            record(w);
            if (w.accepted == 0) {
                log(system + ": no mail accepted during the warm-up: giving up");
                return 1;
            }
        }
        log(system + ": max throughput, " + sessions + " sessions back to back for " + seconds + " s");
        Phase max = phase("max", 0, Long.MAX_VALUE, seconds, 0);
        record(max);
        double maxRate = max.acceptedPerSecond();
        for (double fraction : sweep) {
            double rate = fraction * maxRate;
            if (rate <= 0) {
                continue;
            }
            log(String.format(Locale.ROOT, "%s: offered load %.0f %% of max = %.1f mails/s for %.0f s",
                system, fraction * 100, rate, sweepSeconds));
            Phase p = phase("rate", fraction, Long.MAX_VALUE, sweepSeconds, rate);
            record(p);
        }
        long heapPid = Long.parseLong(opts.getOrDefault("heap-pid", "0"));
        Map<String, String> end = new LinkedHashMap<>();
        end.put("phase", "end");
        if (heapPid > 0) {
            double[] before = ProcStats.heapMiB(heapPid);
            double rss = ProcStats.statusMiB(heapPid, "VmRSS");
            double hwm = ProcStats.statusMiB(heapPid, "VmHWM");
            ProcStats.jcmd(heapPid, "GC.run");
            double[] after = ProcStats.heapMiB(heapPid);
            // The class histogram (itself after a full GC) sums the bytes of live objects. GC.heap_info's
            // "used" right after a full GC also counts the TLABs threads grabbed since, which grows with
            // the number of allocating threads; the histogram total is the live-object figure.
            String histogram = ProcStats.jcmd(heapPid, "GC.class_histogram");
            end.put("heap_objects_mb", fmt(histogramTotalMiB(histogram)));
            String histogramFile = opts.get("heap-histogram");
            if (histogramFile != null) {
                Files.writeString(Path.of(histogramFile), histogram);
            }
            end.put("heap_used_mb", fmt(before[1]));
            end.put("heap_committed_mb", fmt(before[0]));
            end.put("heap_live_mb", fmt(after[1]));
            end.put("rss_mb", fmt(rss));
            end.put("rss_peak_mb", fmt(hwm));
        }
        for (Map.Entry<String, Long> e : procs.entrySet()) {
            end.put("rss." + e.getKey(), fmt(ProcStats.statusMiB(e.getValue(), "VmRSS")));
        }
        append(end);
        log(system + ": end " + end);
        return 0;
    }

    // ------------------------------------------------------------------------------------------------
    /** What one phase measured. */
    private static final class Phase {
        String name;
        double fraction;
        double offeredPerSecond;
        long sent;
        long accepted;
        long rejected;
        long errors;
        double sendSeconds;
        long delivered;
        double deliverSeconds;
        boolean deliveryComplete;
        long[] latenciesMicros = new long[0];
        Map<String, Double> cpu = new LinkedHashMap<>();
        /** CPU seconds the host took from this machine during the phase ({@link ProcStats#stealSeconds}). */
        double stealSeconds = Double.NaN;

        double acceptedPerSecond() {
            return sendSeconds > 0 ? accepted / sendSeconds : 0;
        }
    }

    /** Per session: a growable array of response times of accepted mails. */
    private static final class Lat {
        long[] v = new long[4096];
        int n;

        void add(long micros) {
            if (n == v.length) {
                v = Arrays.copyOf(v, n * 2);
            }
            v[n++] = micros;
        }
    }

    private Phase phase(String name, double fraction, long count, double seconds, double rate) throws InterruptedException {
        Phase result = new Phase();
        result.name = name;
        result.fraction = fraction;
        result.offeredPerSecond = rate;
        drain(name);
        long base = sinkMessages();
        Map<String, Double> cpu0 = cpuNow();
        double steal0 = procStats.stealSeconds();
        AtomicLong next = new AtomicLong();
        AtomicLong accepted = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        Lat[] lats = new Lat[sessions];
        Thread[] threads = new Thread[sessions];
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        long period = rate > 0 ? (long) (1e9 / rate) : 0;
        for (int k = 0; k < sessions; k++) {
            int session = k;
            lats[k] = new Lat();
            threads[k] = new Thread(() -> {
                BenchSmtpSession s = null;
                long j = 0;
                try {
                    while (true) {
                        long i;
                        if (rate > 0) {
                            long intended = t0 + (j * sessions + session) * period;
                            j++;
                            if (intended >= end || System.nanoTime() > end + 60_000_000_000L || Thread.currentThread().isInterrupted()) {
                                break;
                            }
                            long wait = intended - System.nanoTime();
                            if (wait > 0) {
                                LockSupport.parkNanos(wait);
                            }
                            i = next.getAndIncrement();
                        } else {
                            if (System.nanoTime() >= end || Thread.currentThread().isInterrupted()) {
                                break;
                            }
                            i = next.getAndIncrement();
                            if (i >= count) {
                                break;
                            }
                        }
                        try {
                            if (s == null) {
                                s = BenchSmtpSession.open(host, port, TIMEOUT_MILLIS);
                            }
                            String id = "<" + prefix + "-" + name + (rate > 0 ? (int) (fraction * 100) : "") + "-" + i + "@kvs-load.test>";
                            byte[] headers = MailMix.headers(id, i);
                            long a = System.nanoTime();
                            int code = s.send(headers, mix.body(i));
                            long micros = (System.nanoTime() - a) / 1000;
                            if (code == 250) {
                                accepted.incrementAndGet();
                                lats[session].add(micros);
                            } else {
                                rejected.incrementAndGet();
                            }
                        } catch (IOException e) {
                            errors.incrementAndGet();
                            if (s != null) {
                                s.close();
                                s = null;
                            }
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                        }
                    }
                } finally {
                    if (s != null) {
                        s.close();
                    }
                }
            }, "bench-session-" + k);
            threads[k].start();
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis((long) seconds + 120));
            if (t.isAlive()) {
                log("session " + t.getName() + " still running 120 s after the phase: interrupting");
                t.interrupt();
            }
        }
        long t1 = System.nanoTime();
        result.sent = Math.min(next.get(), count);
        result.accepted = accepted.get();
        result.rejected = rejected.get();
        result.errors = errors.get();
        result.sendSeconds = (t1 - t0) / 1e9;
        totalAccepted += result.accepted;
        // delivery: until the sink has every mail accepted in this phase (bounded)
        long deadline = System.nanoTime() + (long) (drainSeconds * 1e9);
        long delivered = sinkMessages() - base;
        while (delivered < result.accepted && System.nanoTime() < deadline) {
            Thread.sleep(20);
            delivered = sinkMessages() - base;
        }
        long t2 = System.nanoTime();
        result.delivered = delivered;
        result.deliveryComplete = delivered >= result.accepted;
        result.deliverSeconds = (t2 - t0) / 1e9;
        Map<String, Double> cpu1 = cpuNow();
        cpu1.forEach((k, v) -> result.cpu.put(k, v - cpu0.getOrDefault(k, Double.NaN)));
        result.stealSeconds = procStats.stealSeconds() - steal0;
        int n = 0;
        for (Lat l : lats) {
            n += l.n;
        }
        long[] all = new long[n];
        int at = 0;
        for (Lat l : lats) {
            System.arraycopy(l.v, 0, all, at, l.n);
            at += l.n;
        }
        Arrays.sort(all);
        result.latenciesMicros = all;
        return result;
    }

    /** Waits (bounded) until the sink has every mail accepted so far. */
    private void drain(String before) throws InterruptedException {
        long deadline = System.nanoTime() + (long) (drainSeconds * 1e9);
        while (sinkMessages() < totalAccepted && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        long have = sinkMessages();
        if (have < totalAccepted) {
            log("before " + before + ": the sink has " + have + " of " + totalAccepted + " accepted mails after "
                + drainSeconds + " s; going on");
        }
    }

    private long sinkMessages() {
        try {
            String s = Files.readString(sinkStats, StandardCharsets.ISO_8859_1);
            int i = s.indexOf("messages=");
            if (i < 0) {
                return 0;
            }
            int j = i + "messages=".length();
            int k = j;
            while (k < s.length() && Character.isDigit(s.charAt(k))) {
                k++;
            }
            return Long.parseLong(s.substring(j, k));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private Map<String, Double> cpuNow() {
        Map<String, Double> cpu = new LinkedHashMap<>();
        procs.forEach((name, pid) -> cpu.put(name, procStats.cpuSeconds(pid)));
        cpu.put("loadgen", procStats.cpuSeconds(ProcessHandle.current().pid()));
        return cpu;
    }

    private void record(Phase p) throws IOException {
        Map<String, String> r = new LinkedHashMap<>();
        r.put("phase", p.name);
        r.put("fraction", fmt(p.fraction));
        r.put("offered_per_s", fmt(p.offeredPerSecond));
        r.put("sent", Long.toString(p.sent));
        r.put("accepted", Long.toString(p.accepted));
        r.put("rejected", Long.toString(p.rejected));
        r.put("errors", Long.toString(p.errors));
        r.put("send_s", fmt(p.sendSeconds));
        r.put("accepted_per_s", fmt(p.acceptedPerSecond()));
        r.put("delivered", Long.toString(p.delivered));
        r.put("delivery_complete", Boolean.toString(p.deliveryComplete));
        r.put("deliver_s", fmt(p.deliverSeconds));
        r.put("delivered_per_s", fmt(p.deliverSeconds > 0 ? p.delivered / p.deliverSeconds : 0));
        long[] l = p.latenciesMicros;
        r.put("avg_ms", fmt(l.length == 0 ? Double.NaN : Arrays.stream(l).average().orElse(0) / 1000));
        r.put("p50_ms", fmt(percentile(l, 0.50) / 1000));
        r.put("p99_ms", fmt(percentile(l, 0.99) / 1000));
        r.put("max_ms", fmt(l.length == 0 ? Double.NaN : l[l.length - 1] / 1000.0));
        p.cpu.forEach((k, v) -> r.put("cpu." + k, fmt(v)));
        r.put("steal_s", fmt(p.stealSeconds));
        append(r);
        log(String.format(Locale.ROOT, "  %s: %d accepted in %.1f s = %.1f/s; delivered %d (%s) = %.1f/s; avg %s ms p99 %s ms; errors %d rejected %d; cpu %s; stolen by the host %s s",
            p.name, p.accepted, p.sendSeconds, p.acceptedPerSecond(), p.delivered,
            p.deliveryComplete ? "all" : "INCOMPLETE", p.deliverSeconds > 0 ? p.delivered / p.deliverSeconds : 0,
            r.get("avg_ms"), r.get("p99_ms"), p.errors, p.rejected, p.cpu, r.get("steal_s")));
    }

    static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int idx = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
    }

    private void append(Map<String, String> fields) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append("system=").append(opts.getOrDefault("system", "system"));
        sb.append("\tlabel=").append(opts.getOrDefault("label", opts.getOrDefault("system", "system")));
        sb.append("\tstart=").append(opts.getOrDefault("start", "1"));
        fields.forEach((k, v) -> sb.append('\t').append(k).append('=').append(v));
        sb.append('\n');
        Files.writeString(results, sb.toString(), StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    static String fmt(double v) {
        return Double.isNaN(v) ? "NaN" : String.format(Locale.ROOT, "%.3f", v);
    }

    private static void log(String message) {
        System.out.printf("%tT bench: %s%n", System.currentTimeMillis(), message);
        System.out.flush();
    }
}
