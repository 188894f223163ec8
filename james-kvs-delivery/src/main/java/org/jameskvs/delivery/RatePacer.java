package org.jameskvs.delivery;

import java.time.Duration;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * A lane's message rate (GCRA with a burst of one): each delivery reserves the next free slot, one
 * interval after the previous one, and is told how long to wait for it. Waiting is done by the caller
 * without a thread (a timer), so a paced lane holds no I/O thread. A rate of 0 means no limit. The
 * rate is read at each reservation, so a node's share of a lane's rate can change while it runs.
 */
final class RatePacer {
    private final DoubleSupplier messagesPerSecond;
    private final LongSupplier nanoTime;
    private long nextFree = Long.MIN_VALUE;

    RatePacer(double messagesPerSecond, LongSupplier nanoTime) {
        this(() -> messagesPerSecond, nanoTime);
    }

    RatePacer(DoubleSupplier messagesPerSecond, LongSupplier nanoTime) {
        this.messagesPerSecond = messagesPerSecond;
        this.nanoTime = nanoTime;
    }

    /** Reserves the next slot; returns how long from now until it starts (zero when free now). */
    synchronized Duration reserve() {
        double rate = messagesPerSecond.getAsDouble();
        long intervalNanos = rate <= 0 ? 0 : (long) (1_000_000_000L / rate);
        if (intervalNanos == 0) {
            return Duration.ZERO;
        }
        long now = nanoTime.getAsLong();
        long start = nextFree == Long.MIN_VALUE || now - nextFree > 0 ? now : nextFree;
        nextFree = start + intervalNanos;
        return Duration.ofNanos(start - now);
    }
}
