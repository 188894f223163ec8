package org.jameskvs.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A target's maximum store+delete rate on one connection, closed loop: batches of {@value #BATCH}
 * transactions pipelined (as {@link StoreDeleteBenchmark} does), one after the other, for a fixed
 * time; the rate is the transactions of which both requests succeeded, per second. The latency runs
 * offer fractions of it.
 */
public final class MaxRate {
    static final int BATCH = 1000;

    private MaxRate() {
    }

    /**
     * @param idPrefix distinct per call (a replicated queue never takes an id twice)
     * @return successful transactions per second over the {@code seconds} after {@code warmupSeconds}
     */
    public static double measure(StoreDeleteTarget target, byte[] body, String idPrefix, int warmupSeconds,
                                 int seconds) throws Exception {
        drive(target, body, idPrefix + "w-", warmupSeconds);
        long t0 = System.nanoTime();
        long ok = drive(target, body, idPrefix, seconds);
        return ok / ((System.nanoTime() - t0) / 1e9);
    }

    /** Runs batches back to back for {@code seconds} (a warm-up: the JIT compiles the hot paths of client and servers); @return transactions that succeeded. */
    static long drive(StoreDeleteTarget target, byte[] body, String idPrefix, int seconds) throws Exception {
        long round = 0;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        byte[][] ids = new byte[BATCH][];
        long ok = 0;
        long failed = 0;
        while (System.nanoTime() < end) {
            long r = round++;
            for (int i = 0; i < BATCH; i++) {
                ids[i] = (idPrefix + r + "-" + i).getBytes(StandardCharsets.US_ASCII);
            }
            int n = target.storeDeleteBatch(ids, body);
            ok += n;
            failed += BATCH - n;
        }
        if (failed > 0) {
            System.out.printf("  (max-rate run: %,d of %,d transactions failed)%n", failed, ok + failed);
        }
        return ok;
    }
}
