package org.jameskvs.bench.replication;

import org.jameskvs.bench.ServerProcesses;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.replication.ManagementTable;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Switchover time under load: three KVS server processes, a ReplicatedQueue on two of them, a
 * writer putting 1 KB messages (32 in flight) and deleting each after its ack; one node of the
 * queue's pair is killed with SIGKILL; measured: the time from the kill to the first
 * acknowledged (two-copy) put that was issued after the kill. Repeated (fresh servers each time),
 * prints every run and min / median / max.
 * <pre>
 * mvn -q -o package -pl jmh-benchmarks -DskipTests
 * java -cp jmh-benchmarks/target/benchmarks.jar \
 *   --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
 *   org.jameskvs.bench.replication.SwitchoverBenchmark [runs=5] [heartbeatMs=500] [heartbeatTimeoutMs=1500] [requestTimeoutMs=2000]
 * </pre>
 * Defaults are the replication defaults (heartbeat 500 ms, path NG after 1.5 s, request timeout
 * 2 s). Bounded: each run loads at most 10 s after the kill.
 */
public final class SwitchoverBenchmark {
    private SwitchoverBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Duration hb = Duration.ofMillis(args.length > 1 ? Long.parseLong(args[1]) : 500);
        Duration hbTimeout = Duration.ofMillis(args.length > 2 ? Long.parseLong(args[2]) : 1500);
        Duration reqTimeout = Duration.ofMillis(args.length > 3 ? Long.parseLong(args[3]) : 2000);
        System.out.printf("switchover: %d runs, heartbeat %d ms, heartbeat timeout %d ms, request timeout %d ms%n",
                runs, hb.toMillis(), hbTimeout.toMillis(), reqTimeout.toMillis());
        List<Long> results = new ArrayList<>();
        for (int run = 1; run <= runs; run++) {
            long ms = once(run, hb, hbTimeout, reqTimeout);
            results.add(ms);
        }
        List<Long> sorted = new ArrayList<>(results);
        Collections.sort(sorted);
        System.out.printf("switchover_ms runs=%s min=%d median=%d max=%d%n", results, sorted.get(0),
                sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1));
        System.exit(0);
    }

    private static long once(int run, Duration hb, Duration hbTimeout, Duration reqTimeout) throws Exception {
        try (ReplicatedTarget t = new ReplicatedTarget(3, hb, hbTimeout, reqTimeout)) {
            KvsQueue q = t.queue();
            List<String> pair = t.opener().managementTable().rows().stream().map(ManagementTable.Row::node).toList();
            int victim = Integer.parseInt(pair.get(1).substring(3)) - 1; // "kvsN" -> index
            ServerProcesses.Running victimServer = t.servers().get(victim);
            byte[] body = new byte[1024];
            Semaphore window = new Semaphore(32);
            AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
            AtomicLong firstAck = new AtomicLong(Long.MAX_VALUE);
            AtomicLong acked = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            AtomicBoolean killed = new AtomicBoolean();
            long start = System.nanoTime();
            long killAt = start + TimeUnit.SECONDS.toNanos(2);
            long hardEnd = killAt + TimeUnit.SECONDS.toNanos(10);
            int i = 0;
            while (System.nanoTime() < hardEnd && firstAck.get() == Long.MAX_VALUE) {
                if (!killed.get() && System.nanoTime() >= killAt) {
                    killed.set(true);
                    killedAt.set(System.nanoTime());
                    victimServer.process().destroyForcibly(); // SIGKILL
                }
                if (!window.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                byte[] id = ("s" + run + "-" + (i++)).getBytes(StandardCharsets.UTF_8);
                long issued = System.nanoTime();
                CompletableFuture<org.jameskvs.client.Ack> f = q.put(id, 0, 0, new byte[0], body);
                f.whenComplete((a, e) -> {
                    window.release();
                    if (a != null && a.isOk()) {
                        acked.incrementAndGet();
                        if (issued >= killedAt.get()) {
                            firstAck.accumulateAndGet(System.nanoTime(), Math::min);
                        }
                        q.delete(id);
                    } else {
                        failed.incrementAndGet();
                    }
                });
            }
            long ms = firstAck.get() == Long.MAX_VALUE ? -1 : TimeUnit.NANOSECONDS.toMillis(firstAck.get() - killedAt.get());
            System.out.printf("run %d: killed %s after %d acknowledged puts; first acknowledged put issued after the kill: %d ms"
                    + " (failed puts: %d)%n", run, pair.get(1), acked.get(), ms, failed.get());
            window.tryAcquire(32, 30, TimeUnit.SECONDS);
            return ms;
        }
    }
}
