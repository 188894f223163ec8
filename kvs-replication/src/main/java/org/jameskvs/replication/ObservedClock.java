package org.jameskvs.replication;

/**
 * The time the replication judges silence by: the real clock minus the stretches in which this
 * process itself could not run (a GC pause, CPU starvation, an event loop blocked or far behind).
 *
 * <p>Why: a node is declared lost when it has not answered for {@code heartbeatTimeout}, a
 * request when it has not been answered for {@code requestTimeout}. If the client's own thread
 * stood still for 2 s, nothing could be sent, read or judged in that time, and the first tick after
 * it would find every path "silent for 2 s" and mark healthy nodes NG (seen in the open-loop
 * latency runs: report/latency.md, "Where the tail comes from", point 7). Only time in which the
 * client was able to observe its nodes counts.
 *
 * <p>How: the core's thread reads this clock at least once per tick ({@code tickMillis}, 50 ms), as
 * the tick reads it. When two successive reads are further apart than {@code allowance} (two
 * ticks), the thread was not running our code in between: the excess is a pause, and it is taken
 * out of the observed time. The observed time is monotonic and advances at most {@code allowance}
 * per read. A node really frozen or killed is still found within about the heartbeat timeout of
 * time the client could observe: only the client's own standstill is discounted.
 *
 * <p>Not thread-safe: only the core's thread may read it (every state machine call runs there).
 */
final class ObservedClock implements Clock {
    private final Clock real;
    private final long allowanceNanos;
    private long lastRead;
    private long paused;
    /** Total time discounted as the client's own pauses (diagnostics; read from any thread). */
    private volatile long pausedTotal;

    /**
     * @param allowanceNanos the largest gap between two reads that still counts as observed time
     *                       (a pause beyond it is discounted); two tick periods
     */
    ObservedClock(Clock real, long allowanceNanos) {
        if (allowanceNanos <= 0) {
            throw new IllegalArgumentException("allowance must be positive");
        }
        this.real = real;
        this.allowanceNanos = allowanceNanos;
        this.lastRead = real.nanoTime();
    }

    @Override
    public long nanoTime() {
        long now = real.nanoTime();
        long gap = now - lastRead;
        if (gap > allowanceNanos) {
            paused += gap - allowanceNanos;
            pausedTotal = paused;
        }
        lastRead = now;
        return now - paused;
    }

    /** Time discounted so far as the client's own pauses, in nanoseconds. */
    long pausedNanos() {
        return pausedTotal;
    }
}
