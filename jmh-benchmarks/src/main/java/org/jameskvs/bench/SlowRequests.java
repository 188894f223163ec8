package org.jameskvs.bench;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * When the slow acks of a run arrived, so a tail can be lined up with what else happened then
 * (a journal file roll, a GC pause in a server's log, a JFR event). Keeps the first
 * {@code capacity} acks slower than {@code thresholdNanos} (wall-clock arrival and latency) and
 * groups them into episodes: slow acks less than {@value #GAP_MILLIS} ms apart.
 */
final class SlowRequests {
    private static final long GAP_MILLIS = 20;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    private final long thresholdNanos;
    private final long[] arrivalMillis;
    private final long[] latencyNanos;
    private final AtomicInteger count = new AtomicInteger();

    SlowRequests(long thresholdNanos, int capacity) {
        this.thresholdNanos = thresholdNanos;
        this.arrivalMillis = new long[capacity];
        this.latencyNanos = new long[capacity];
    }

    void offer(long latency) {
        if (latency < thresholdNanos) {
            return;
        }
        int i = count.getAndIncrement();
        if (i < arrivalMillis.length) {
            arrivalMillis[i] = System.currentTimeMillis();
            latencyNanos[i] = latency;
        }
    }

    /** Slow acks seen (also those past the capacity). */
    int count() {
        return count.get();
    }

    /** One line per episode, worst first, at most {@code max}: when it began (UTC), worst latency, acks. Call after the run. */
    List<String> episodes(int max) {
        int n = Math.min(count.get(), arrivalMillis.length);
        long[][] byArrival = new long[n][];
        for (int i = 0; i < n; i++) {
            byArrival[i] = new long[]{arrivalMillis[i], latencyNanos[i]};
        }
        java.util.Arrays.sort(byArrival, java.util.Comparator.comparingLong(a -> a[0]));
        // {first arrival, last arrival, acks, worst latency, arrival of the worst}
        List<long[]> episodes = new ArrayList<>();
        for (long[] a : byArrival) {
            long[] last = episodes.isEmpty() ? null : episodes.get(episodes.size() - 1);
            if (last != null && a[0] - last[1] <= GAP_MILLIS) {
                last[1] = a[0];
                last[2]++;
                if (a[1] > last[3]) {
                    last[3] = a[1];
                    last[4] = a[0];
                }
            } else {
                episodes.add(new long[]{a[0], a[0], 1, a[1], a[0]});
            }
        }
        episodes.sort((x, y) -> Long.compare(y[3], x[3]));
        List<String> lines = new ArrayList<>();
        for (long[] e : episodes.subList(0, Math.min(max, episodes.size()))) {
            // The worst ack's request was due at its arrival minus its latency: about when the stall began.
            lines.add(String.format("stall from ~%s UTC: worst %.1f ms, %d slow acks arriving %s..%s",
                    TIME.format(Instant.ofEpochMilli(e[4] - e[3] / 1_000_000)), e[3] / 1e6, e[2],
                    TIME.format(Instant.ofEpochMilli(e[0])), TIME.format(Instant.ofEpochMilli(e[1]))));
        }
        return lines;
    }
}
