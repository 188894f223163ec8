package org.jameskvs.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;


/**
 * CPU time per store+delete transaction, per process and per client thread: what a transaction
 * costs, independent of what else the machine runs (throughput on a shared 2-core machine is not;
 * CPU per transaction mostly is). Same workload as {@link StoreDeleteBenchmark} (by default batches of
 * 1000 pipelined store+delete, 1 KB).
 * <pre>
 * java -cp jmh-benchmarks/target/benchmarks.jar --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
 *      --add-opens=java.base/java.lang=ALL-UNNAMED \
 *      org.jameskvs.bench.CpuPerTransaction [targets=kvs-2copies,kvs-1copy,redis-aof] [seconds=10] [bytes=1024] [batch=1000]
 * </pre>
 * Prints one table: transactions, wall-clock rate, microseconds of CPU per transaction of the
 * client process (split by thread) and of each server process, and the client's bytes allocated per
 * transaction.
 */
public final class CpuPerTransaction {

    public static void main(String[] args) throws Exception {
        List<String> targets = List.of((args.length > 0 ? args[0] : "kvs-2copies,kvs-1copy,redis-aof").split(","));
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int bytes = args.length > 2 ? Integer.parseInt(args[2]) : 1024;
        int batch = args.length > 3 ? Integer.parseInt(args[3]) : 1000;
        StringBuilder table = new StringBuilder(String.format("%n| target | tx | tx/s (wall) | client us/tx | servers us/tx | total us/tx | client B/tx | client threads us/tx |%n|---|---:|---:|---:|---:|---:|---:|---|%n"));
        for (String t : targets) {
            table.append(run(t, seconds, bytes, batch)).append('\n');
        }
        System.out.println(table);
    }

    private static StoreDeleteTarget create(String name) throws Exception {
        return StoreDeleteTarget.create(name);
    }

    private static String run(String name, int seconds, int bytes, int batch) throws Exception {
        try (StoreDeleteTarget target = create(name)) {
            byte[] body = new byte[bytes];
            Arrays.fill(body, (byte) 'x');
            byte[][] ids = new byte[batch][];
            long[] round = {0};
            runFor(target, ids, body, round, Duration.ofSeconds(Math.max(3, seconds / 2))); // warm-up (JIT)
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            Map<Long, Long> threadCpu0 = threadCpu(threads);
            Map<Long, String> names = threadNames(threads);
            long alloc0 = allocated(threads);
            long proc0 = processCpu();
            long[] servers0 = target.serverProcesses().stream().mapToLong(CpuPerTransaction::cpuOf).toArray();
            long wall0 = System.nanoTime();
            long tx = runFor(target, ids, body, round, Duration.ofSeconds(seconds));
            long wall = System.nanoTime() - wall0;
            long proc = processCpu() - proc0;
            long alloc = allocated(threads) - alloc0;
            long[] servers1 = target.serverProcesses().stream().mapToLong(CpuPerTransaction::cpuOf).toArray();
            long serverNanos = 0;
            StringBuilder perServer = new StringBuilder();
            for (int i = 0; i < servers1.length; i++) {
                long d = servers1[i] - servers0[i];
                serverNanos += d;
                perServer.append(perServer.isEmpty() ? "" : " + ").append(us(d, tx));
            }
            Map<Long, Long> threadCpu1 = threadCpu(threads);
            names.putAll(threadNames(threads));
            Map<String, Long> byName = new TreeMap<>();
            threadCpu1.forEach((id, cpu) -> byName.merge(group(names.getOrDefault(id, "?")), cpu - threadCpu0.getOrDefault(id, 0L), Long::sum));
            StringBuilder perThread = new StringBuilder();
            byName.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
                    .filter(e -> e.getValue() * 1.0 / tx >= 50) // >= 0.05 us/tx
                    .forEach(e -> perThread.append(perThread.isEmpty() ? "" : ", ").append(e.getKey()).append(' ').append(us(e.getValue(), tx)));
            return String.format("| %s | %,d | %,.0f | %s | %s = %s | %s | %,d | %s |", name, tx, tx * 1e9 / wall, us(proc, tx),
                    perServer, us(serverNanos, tx), us(proc + serverNanos, tx), alloc / tx, perThread);
        }
    }

    private static long runFor(StoreDeleteTarget target, byte[][] ids, byte[] body, long[] round, Duration d) throws Exception {
        long end = System.nanoTime() + d.toNanos();
        long tx = 0;
        while (System.nanoTime() < end) {
            long r = round[0]++;
            for (int i = 0; i < ids.length; i++) {
                ids[i] = ("m-" + r + "-" + i).getBytes(StandardCharsets.UTF_8);
            }
            int ok = target.storeDeleteBatch(ids, body);
            if (ok != ids.length) {
                throw new IllegalStateException("only " + ok + " of " + ids.length + " transactions succeeded");
            }
            tx += ok;
        }
        return tx;
    }

    /** Thread pools and numbered threads are summed under one name. */
    private static String group(String threadName) {
        return threadName.replaceAll("[-#]?\\d+$", "").replaceAll("-\\d+-", "-");
    }

    private static String us(long nanos, long tx) {
        return String.format("%.2f", nanos / 1000.0 / tx);
    }

    private static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static long cpuOf(Process p) {
        return p.toHandle().info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    /** Bytes allocated so far by the live threads of this process (approximate: threads that ended are not counted). */
    private static long allocated(ThreadMXBean threads) {
        long[] ids = threads.getAllThreadIds();
        long sum = 0;
        for (long b : ((com.sun.management.ThreadMXBean) threads).getThreadAllocatedBytes(ids)) {
            sum += Math.max(0, b);
        }
        return sum;
    }

    private static Map<Long, Long> threadCpu(ThreadMXBean threads) {
        Map<Long, Long> out = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long cpu = threads.getThreadCpuTime(id);
            if (cpu >= 0) {
                out.put(id, cpu);
            }
        }
        return out;
    }

    private static Map<Long, String> threadNames(ThreadMXBean threads) {
        Map<Long, String> out = new HashMap<>();
        for (ThreadInfo i : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (i != null) {
                out.put(i.getThreadId(), i.getThreadName());
            }
        }
        return out;
    }
}
