package org.jameskvs.bench.replication;

import org.jameskvs.bench.ServerProcesses;
import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.ReadResult;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The paper's Fig. 6 (time for recovery): a queue of 500,000 x 1 KB messages on a KVS server
 * process; the time to read the whole queue back, one READ block after the other on one
 * connection, for blocks of 1, 10, 100, 1,000 and 10,000 messages (paper: 5.9 s at 1,000 per
 * block, 14x that at 1 per block).
 * <pre>
 * mvn -q -o package -pl jmh-benchmarks -DskipTests
 * java -cp jmh-benchmarks/target/benchmarks.jar \
 *   --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
 *   org.jameskvs.bench.replication.RecoveryBenchmark [messages=500000] [maxSecondsPerBlockSize=120]
 * </pre>
 * Bounded: a block size whose read-back passes {@code maxSecondsPerBlockSize} stops there and its
 * full time is extrapolated from the messages read (marked "extrapolated").
 */
public final class RecoveryBenchmark {
    private static final int[] BLOCKS = {1, 10, 100, 1000, 10_000};

    private RecoveryBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int messages = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
        long maxSeconds = args.length > 1 ? Long.parseLong(args[1]) : 120;
        try (ServerProcesses.Running server = ServerProcesses.kvs("none")) {
            KvsClientConfig cc = KvsClientConfig.builder().host("127.0.0.1").port(server.port())
                    .credentials("james", ServerProcesses.PASSWORD).maxInFlight(4096).maxPending(65536)
                    .requestTimeout(Duration.ofSeconds(60)).build();
            long t0 = System.nanoTime();
            try (KvsClient c = KvsClient.connect(cc)) {
                KvsQueue q = c.open("recovery", OpenOptions.writer("bench", 1)).join().orThrow();
                byte[] body = new byte[1024];
                List<CompletableFuture<Ack>> batch = new ArrayList<>();
                for (int i = 0; i < messages; i++) {
                    batch.add(q.put(("r-" + i).getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], body));
                    if (batch.size() == 2000) {
                        for (CompletableFuture<Ack> f : batch) {
                            f.join().orThrow();
                        }
                        batch.clear();
                    }
                }
                for (CompletableFuture<Ack> f : batch) {
                    f.join().orThrow();
                }
            }
            System.out.printf("stored %,d x 1 KB in %.1f s%n", messages, (System.nanoTime() - t0) / 1e9);
            System.out.println("| messages per READ block | READ requests | messages read | time (s) | messages/s |");
            System.out.println("|---:|---:|---:|---:|---:|");
            for (int block : BLOCKS) {
                try (KvsClient c = KvsClient.connect(cc)) {
                    KvsQueue q = c.open("recovery", OpenOptions.reader()).join().orThrow();
                    long from = 0;
                    long read = 0;
                    long requests = 0;
                    boolean cut = false;
                    long start = System.nanoTime();
                    long limit = start + TimeUnit.SECONDS.toNanos(maxSeconds);
                    int maxBytes = (int) Math.min(48L << 20, (long) block * 1200 + 4096);
                    while (true) {
                        ReadResult rr = q.read(from, block, maxBytes, 0).join();
                        requests++;
                        if (!rr.isOk()) {
                            throw new IllegalStateException("READ: " + rr.status() + " " + rr.reason());
                        }
                        if (rr.messages().isEmpty()) {
                            break;
                        }
                        read += rr.messages().size();
                        from = rr.nextPosition();
                        if (System.nanoTime() > limit) {
                            cut = true;
                            break;
                        }
                    }
                    double s = (System.nanoTime() - start) / 1e9;
                    double full = cut ? s * messages / read : s;
                    System.out.printf("| %,d | %,d | %,d | %.2f%s | %,.0f |%n", block, requests, read, full,
                            cut ? " (extrapolated from " + String.format("%.0f", s) + " s)" : "", read / s);
                    if (!cut && read != messages) {
                        throw new IllegalStateException("read " + read + " of " + messages);
                    }
                }
            }
        }
        System.exit(0);
    }
}
