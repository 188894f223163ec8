package org.jameskvs.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The answers of one open-loop run, counted from whichever threads complete them. A store
 * acknowledged OK is a latency sample, measured from its intended send time, and counts towards the
 * achieved rate if it arrived inside the measurement window; any other answer is a failure, counted
 * by kind and never a latency sample. Deletes are not timed but their failures are counted too.
 */
final class AckTally {
    private final Recorder latencies = new Recorder(3);
    private final long windowEndNanos;
    private final SlowRequests slow;
    private final LongAdder okInWindow = new LongAdder();
    private final LongAdder okLate = new LongAdder();
    private final LongAdder answered = new LongAdder();
    private final Map<String, LongAdder> storeFailures = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> deleteFailures = new ConcurrentHashMap<>();
    private final Map<String, String> examples = new ConcurrentHashMap<>();

    AckTally(long windowEndNanos, SlowRequests slow) {
        this.windowEndNanos = windowEndNanos;
        this.slow = slow;
    }

    void store(long intendedNanos, Failure failure) {
        long now = System.nanoTime();
        if (failure == null) {
            long latency = Math.max(0, now - intendedNanos);
            latencies.recordValue(latency);
            slow.offer(latency);
            (now <= windowEndNanos ? okInWindow : okLate).increment();
        } else {
            count(storeFailures, "store " + failure.kind(), failure);
        }
        answered.increment();
    }

    void delete(Failure failure) {
        if (failure != null) {
            count(deleteFailures, "delete " + failure.kind(), failure);
        }
        answered.increment();
    }

    private void count(Map<String, LongAdder> byKind, String kind, Failure failure) {
        byKind.computeIfAbsent(kind, k -> new LongAdder()).increment();
        examples.putIfAbsent(kind, String.valueOf(failure.detail()));
    }

    /** Stores and deletes answered so far (OK or not). */
    long answered() {
        return answered.sum();
    }

    long okInWindow() {
        return okInWindow.sum();
    }

    long okLate() {
        return okLate.sum();
    }

    Histogram latencies() {
        return latencies.getIntervalHistogram();
    }

    long storeFailures() {
        return storeFailures.values().stream().mapToLong(LongAdder::sum).sum();
    }

    long deleteFailures() {
        return deleteFailures.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** Every failure kind with its count and one example's text. */
    Map<String, String> failureSummary() {
        Map<String, String> out = new TreeMap<>();
        storeFailures.forEach((k, n) -> out.put(k, n.sum() + " (e.g. " + examples.get(k) + ")"));
        deleteFailures.forEach((k, n) -> out.put(k, n.sum() + " (e.g. " + examples.get(k) + ")"));
        return out;
    }
}
