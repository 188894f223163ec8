package org.jameskvs.bench;

import io.netty.buffer.Unpooled;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.RollCycles;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.storage.JournalTuning;
import org.jameskvs.server.storage.QueueState;
import org.jameskvs.server.storage.QueueStore;
import org.jameskvs.server.storage.StoreConfig;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.Arrays;

/**
 * Where the store thread itself stalls, without network or client: drives a {@link QueueStore}
 * (default journal tuning, FIVE_MINUTELY files) in groups of 10 put+delete of 1 KB and one commit,
 * as a server's I/O thread does, with maintenance every 50 groups. Its journal clock jumps 5 minutes
 * every {@code rollEvery} groups, so files roll and, once compaction may move the queue's CREATE
 * (10 minutes), dead files are deleted. Prints every group whose CPU time exceeds 3 ms (with its
 * minor page faults: a fault-free CPU spike is not the kernel's page allocation), every maintenance
 * call over 2 ms, the first group after each roll, and percentiles of wall and CPU time per group.
 * Wall time includes waiting for a CPU; thread CPU time does not, so a loaded machine still shows
 * what the store thread itself spends.
 * <pre>
 * java --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
 *      --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED \
 *      --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
 *      -Dchronicle.analytics.disable=true -Xmx256m -cp jmh-benchmarks/target/benchmarks.jar \
 *      org.jameskvs.bench.JournalStallProbe [groups=160000] [rollEvery=40000] [warmAheadBytes=33554432]
 * </pre>
 */
public final class JournalStallProbe {
    private static final int PER_GROUP = 10;
    private static final long SPIKE_NANOS = 3_000_000;
    private static final long SLOW_MAINTENANCE_NANOS = 2_000_000;

    private JournalStallProbe() {
    }

    public static void main(String[] args) throws IOException {
        int groups = args.length > 0 ? Integer.parseInt(args[0]) : 160_000;
        int rollEvery = args.length > 1 ? Integer.parseInt(args[1]) : 40_000;
        long warmAhead = args.length > 2 ? Long.parseLong(args[2]) : JournalTuning.defaults().warmAheadBytes();
        Path dir = Files.createTempDirectory("journal-stall-probe");
        SetTimeProvider clock = new SetTimeProvider(System.currentTimeMillis() * 1_000_000L);
        StoreConfig config = StoreConfig.defaults(dir).withTuning(JournalTuning.defaults()
                .withRollCycle(RollCycles.FIVE_MINUTELY, clock).withWarmAhead(warmAhead));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long[] wall = new long[groups];
        long[] cpu = new long[groups];
        byte[] body = new byte[1024];
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("probe", 0, 0);
            long n = 0;
            for (int g = 0; g < groups; g++) {
                if (g > 0 && g % rollEvery == 0) {
                    clock.advanceMillis(300_000);
                }
                long faults = minorFaults();
                long t0 = System.nanoTime();
                long c0 = threads.getCurrentThreadCpuTime();
                for (int i = 0; i < PER_GROUP; i++) {
                    byte[] id = ("m" + n++).getBytes(StandardCharsets.US_ASCII);
                    check(store.put(q, id, 5, 0, Unpooled.EMPTY_BUFFER, Unpooled.wrappedBuffer(body)));
                    check(store.delete(q, id));
                }
                check(store.commit());
                wall[g] = System.nanoTime() - t0;
                cpu[g] = threads.getCurrentThreadCpuTime() - c0;
                if (cpu[g] > SPIKE_NANOS) {
                    System.out.printf("%s UTC group %d (%,d tx): %.2f ms CPU, %.2f ms wall, %d minor faults%n",
                            LocalTime.now(ZoneOffset.UTC), g, n, cpu[g] / 1e6, wall[g] / 1e6, minorFaults() - faults);
                }
                if (g % 50 == 0) {
                    long m0 = System.nanoTime();
                    long mc0 = threads.getCurrentThreadCpuTime();
                    store.maintenance();
                    long took = System.nanoTime() - m0;
                    if (took > SLOW_MAINTENANCE_NANOS) {
                        System.out.printf("maintenance after group %d: %.1f ms wall, %.1f ms CPU%n", g, took / 1e6,
                                (threads.getCurrentThreadCpuTime() - mc0) / 1e6);
                    }
                }
            }
        } finally {
            ServerProcesses.deleteTree(dir);
        }
        for (int g = 0; g < groups; g += rollEvery) {
            System.out.printf("first group after roll %d: %.2f ms wall, %.2f ms CPU%n", g / rollEvery, wall[g] / 1e6, cpu[g] / 1e6);
        }
        System.out.println("per group, wall: " + percentiles(wall));
        System.out.println("per group, CPU:  " + percentiles(cpu));
    }

    private static void check(Status s) {
        if (s != Status.OK) {
            throw new IllegalStateException("store answered " + s);
        }
    }

    private static String percentiles(long[] values) {
        long[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return String.format("p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.2f ms", s[n / 2] / 1e6, s[n * 99 / 100] / 1e6,
                s[n * 999 / 1000] / 1e6, s[n - 1] / 1e6);
    }

    /** This thread's minor page faults so far (Linux), -1 where unknown. */
    private static long minorFaults() {
        try {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[7]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
