package org.jameskvs.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Store latency at a fixed offered rate (open loop): transaction i is due at {@code start + i/rate};
 * its latency is measured from when it was DUE to when the store was acknowledged, so a stalled
 * server is charged for the requests it delayed (no coordinated omission). Each stored message is
 * deleted right after its store is acknowledged (not timed), as a relayed mail would be.
 */
public final class LatencyAtRate {
    public record Result(String target, int size, int offeredRate, long completed, double achievedRate,
                         double p50Micros, double p99Micros, double maxMicros) {
    }

    private LatencyAtRate() {
    }

    public static Result run(String targetName, int size, int ratePerSecond, int seconds) throws Exception {
        try (StoreDeleteTarget target = StoreDeleteTarget.create(targetName)) {
            byte[] body = new byte[size];
            Arrays.fill(body, (byte) 'y');
            // Warm-up at the same rate for a third of the time, not recorded.
            drive(target, body, ratePerSecond, Math.max(1, seconds / 3), null);
            Recorder recorder = new Recorder(3);
            long t0 = System.nanoTime();
            long done = drive(target, body, ratePerSecond, seconds, recorder);
            double elapsed = (System.nanoTime() - t0) / 1e9;
            Histogram h = recorder.getIntervalHistogram();
            return new Result(targetName, size, ratePerSecond, done, done / elapsed,
                    h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0, h.getMaxValue() / 1000.0);
        }
    }

    private static long drive(StoreDeleteTarget target, byte[] body, int rate, int seconds, Recorder recorder)
            throws Exception {
        long total = (long) rate * seconds;
        double intervalNanos = 1e9 / rate;
        long start = System.nanoTime();
        CompletableFuture<?> last = CompletableFuture.completedFuture(null);
        for (long i = 0; i < total; ) {
            long now = System.nanoTime();
            long dueCount = Math.min(total, (long) ((now - start) / intervalNanos) + 1);
            if (dueCount <= i) {
                LockSupport.parkNanos(20_000);
                continue;
            }
            for (; i < dueCount; i++) {
                long due = start + (long) (i * intervalNanos);
                byte[] id = ("lat-" + i).getBytes(StandardCharsets.UTF_8);
                CompletableFuture<?> stored = target.storeAsync(id, body);
                if (recorder != null) {
                    stored.thenRun(() -> recorder.recordValue(Math.max(0, System.nanoTime() - due)));
                }
                last = target.deleteAsync(id);
            }
            target.flush();
            if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(seconds * 3L)) {
                throw new IllegalStateException("target cannot keep up with " + rate + "/s; aborting (bounded run)");
            }
        }
        target.flush();
        last.get(60, TimeUnit.SECONDS);
        return total;
    }
}
