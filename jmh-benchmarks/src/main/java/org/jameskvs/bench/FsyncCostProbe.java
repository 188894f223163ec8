package org.jameskvs.bench;

import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.storage.FsyncObserver;
import org.jameskvs.server.storage.FsyncPolicy;
import org.jameskvs.server.storage.QueueState;
import org.jameskvs.server.storage.QueueStore;
import org.jameskvs.server.storage.StoreConfig;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What an fsync policy costs the store in CPU and in device requests, without network or client:
 * drives a {@link QueueStore} (default journal tuning, so the page warmer runs) with groups of
 * {@code group} put+delete pairs of {@code size}-byte bodies and one commit per group, as a server's
 * I/O thread commits one block of pipelined requests (with {@code fsync.policy=batch} each commit
 * fsyncs). Each run opens a fresh store in a new directory, runs one second unmeasured, then
 * {@code duration} measured. Per run it prints:
 * <ul>
 * <li>mutations/s (a put or a delete is one mutation);</li>
 * <li>process CPU us per mutation (every thread: store, page warmer, GC, JIT), and of it the store
 *     thread's and the warmer thread's (thread CPU clocks);</li>
 * <li>fsyncs (counted through {@link FsyncObserver}) and the store thread's CPU and wall time per
 *     commit ({@code commit()} including its fsync: under batch nearly all of its CPU is the
 *     kernel's work for the fsync, and its wall time includes waiting for the device; under none it
 *     is the commit's own small cost);</li>
 * <li>write requests, flush requests and KiB written on the device holding the journal
 *     ({@code /sys/dev/block/MAJ:MIN/stat}) per fsync: the whole device's, so other writers on a
 *     shared machine add to them.</li>
 * </ul>
 * then the median of each column per policy. The 1-minute load average is printed with each run.
 * <pre>
 * java -Dchronicle.analytics.disable=true --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
 *      --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
 *      -cp jmh-benchmarks/target/benchmarks.jar org.jameskvs.bench.FsyncCostProbe \
 *      [policies=batch,none] [duration=20 (seconds) or n200000 (mutations)] [repeats=3] [size=1024] [group=10]
 * </pre>
 * {@code -Dprobe.dir=/path} puts the journals elsewhere than {@code java.io.tmpdir}.
 */
public final class FsyncCostProbe {
    private static final long WARMUP_NANOS = 1_000_000_000L;

    private FsyncCostProbe() {
    }

    /** One measured run: totals, turned into the printed columns by {@link #columns}. */
    private record Run(long mutations, long wallNanos, long processCpuNanos, long storeCpuNanos, long warmerCpuNanos,
                       long fsyncs, long commits, long commitCpuNanos, long commitWallNanos, DeviceStat device) {
        double[] columns() {
            double perMutation = 1e3 * mutations;
            // per fsync: none without fsyncs (policy none: the device's writes are the kernel's writeback)
            double syncs = fsyncs == 0 ? Double.NaN : fsyncs;
            return new double[] {
                    mutations / (wallNanos / 1e9),
                    processCpuNanos / perMutation,
                    storeCpuNanos / perMutation,
                    warmerCpuNanos / perMutation,
                    fsyncs,
                    commitCpuNanos / 1e3 / Math.max(1, commits),
                    commitWallNanos / 1e3 / Math.max(1, commits),
                    device == null ? Double.NaN : (double) device.writes / syncs,
                    device == null ? Double.NaN : (double) device.flushes / syncs,
                    device == null ? Double.NaN : device.sectors * 512.0 / 1024 / syncs,
            };
        }
    }

    private static final String HEADER = String.format(Locale.ROOT, "%-7s %9s %9s %9s %9s %8s %10s %10s %8s %8s %9s %5s",
            "policy", "mut/s", "cpu us/m", "store us", "warmer us", "fsyncs", "commit cpu", "commit wall", "wr/fsync",
            "fl/fsync", "KiB/fsync", "load");

    public static void main(String[] args) throws IOException {
        List<FsyncPolicy> policies = Arrays.stream((args.length > 0 ? args[0] : "batch,none").split(","))
                .map(p -> FsyncPolicy.valueOf(p.trim().toUpperCase(Locale.ROOT))).toList();
        String duration = args.length > 1 ? args[1] : "20";
        int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        int size = args.length > 3 ? Integer.parseInt(args[3]) : 1024;
        int group = args.length > 4 ? Integer.parseInt(args[4]) : 10;
        long maxMutations = duration.startsWith("n") ? Long.parseLong(duration.substring(1)) : Long.MAX_VALUE;
        long maxNanos = duration.startsWith("n") ? Long.MAX_VALUE : (long) (Double.parseDouble(duration) * 1e9);
        Path parent = Path.of(System.getProperty("probe.dir", System.getProperty("java.io.tmpdir")));
        System.out.printf("FsyncCostProbe: %s, %s per run, %d runs each (interleaved), %d-byte bodies, %d put+delete per commit, journals under %s%n",
                policies, maxNanos == Long.MAX_VALUE ? maxMutations + " mutations" : duration + " s", repeats, size,
                group, parent);
        List<List<Run>> runs = new ArrayList<>();
        policies.forEach(p -> runs.add(new ArrayList<>()));
        System.out.println(HEADER);
        for (int r = 0; r < repeats; r++) {
            for (int i = 0; i < policies.size(); i++) {
                Run run = run(parent, policies.get(i), maxNanos, maxMutations, size, group);
                runs.get(i).add(run);
                System.out.println(row(policies.get(i).name().toLowerCase(Locale.ROOT), run.columns(), LoadAverage.oneMinute()));
            }
        }
        System.out.println("median per policy:");
        System.out.println(HEADER);
        for (int i = 0; i < policies.size(); i++) {
            System.out.println(row(policies.get(i).name().toLowerCase(Locale.ROOT), medians(runs.get(i)), ""));
        }
    }

    private static Run run(Path parent, FsyncPolicy policy, long maxNanos, long maxMutations, int size, int group)
            throws IOException {
        Path dir = Files.createTempDirectory(parent, "fsync-cost-probe");
        AtomicLong fsyncs = new AtomicLong();
        FsyncObserver.install((d, ends) -> fsyncs.incrementAndGet());
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'x');
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir).withFsync(policy))) {
            QueueState q = store.create("probe", 0, 0);
            long[] n = {0};
            long warmupEnd = System.nanoTime() + WARMUP_NANOS;
            while (System.nanoTime() < warmupEnd) {
                group(store, q, n, body, group, new long[2]);
            }
            DeviceStat device0 = DeviceStat.of(dir);
            long fsyncs0 = fsyncs.get();
            long process0 = processCpuNanos();
            long warmer0 = warmerCpuNanos(threads);
            long store0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            long mutations = 0;
            long commits = 0;
            long[] commitCpuAndWall = new long[2];
            while (mutations < maxMutations && System.nanoTime() - t0 < maxNanos) {
                group(store, q, n, body, group, commitCpuAndWall);
                mutations += 2L * group;
                commits++;
            }
            long wall = System.nanoTime() - t0;
            long storeCpu = threads.getCurrentThreadCpuTime() - store0;
            long warmerCpu = warmerCpuNanos(threads) - warmer0;
            long processCpu = processCpuNanos() - process0;
            DeviceStat device1 = DeviceStat.of(dir);
            return new Run(mutations, wall, processCpu, storeCpu, warmerCpu, fsyncs.get() - fsyncs0, commits,
                    commitCpuAndWall[0], commitCpuAndWall[1],
                    device0 == null || device1 == null ? null : device1.minus(device0));
        } finally {
            FsyncObserver.install(null);
            ServerProcesses.deleteTree(dir);
        }
    }

    /** One block: {@code group} put+delete pairs and a commit, whose CPU and wall nanos are added to {@code commit}. */
    private static void group(QueueStore store, QueueState q, long[] n, byte[] body, int group, long[] commit) {
        for (int i = 0; i < group; i++) {
            byte[] id = ("m" + n[0]++).getBytes(StandardCharsets.US_ASCII);
            check(store.put(q, id, 5, 0, Unpooled.EMPTY_BUFFER, Unpooled.wrappedBuffer(body)));
            check(store.delete(q, id));
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long c0 = threads.getCurrentThreadCpuTime();
        long w0 = System.nanoTime();
        check(store.commit());
        commit[1] += System.nanoTime() - w0;
        commit[0] += threads.getCurrentThreadCpuTime() - c0;
    }

    private static void check(Status s) {
        if (s != Status.OK) {
            throw new IllegalStateException("store answered " + s);
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** CPU of the journal's page warmer threads (one per open store), 0 if none. */
    private static long warmerCpuNanos(ThreadMXBean threads) {
        long sum = 0;
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("kvs-journal-warmer-")) {
                sum += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    private static String row(String name, double[] c, String load) {
        return String.format(Locale.ROOT, "%-7s %9.0f %9.2f %9.2f %9.2f %8.0f %10.1f %10.1f %8.2f %8.2f %9.1f %5s",
                name, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], load);
    }

    private static double[] medians(List<Run> runs) {
        double[][] all = runs.stream().map(Run::columns).toArray(double[][]::new);
        double[] m = new double[all[0].length];
        for (int c = 0; c < m.length; c++) {
            int col = c;
            double[] v = Arrays.stream(all).mapToDouble(a -> a[col]).sorted().toArray();
            m[c] = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        }
        return m;
    }

    /**
     * Counters of the block device holding a directory (Linux {@code /sys/dev/block/MAJ:MIN/stat}; a
     * partition has its own): write requests completed, sectors written, flush requests completed.
     */
    private record DeviceStat(long writes, long sectors, long flushes) {
        DeviceStat minus(DeviceStat o) {
            return new DeviceStat(writes - o.writes, sectors - o.sectors, flushes - o.flushes);
        }

        static DeviceStat of(Path dir) {
            try {
                long dev = (Long) Files.getAttribute(dir, "unix:dev");
                long major = (dev >>> 8) & 0xfff | (dev >>> 32) & ~0xfffL;
                long minor = dev & 0xff | (dev >>> 12) & ~0xffL;
                String[] f = Files.readString(Path.of("/sys/dev/block/" + major + ":" + minor + "/stat")).trim().split("\\s+");
                // fields: reads, merged, sectors, ticks, writes, merged, sectors, ticks, ... ; flushes at 15 (Linux 5.5+)
                return new DeviceStat(Long.parseLong(f[4]), Long.parseLong(f[6]), f.length > 15 ? Long.parseLong(f[15]) : 0);
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
    }
}
