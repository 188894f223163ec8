package org.jameskvs.client;

import java.time.Duration;

/** Reconnect delays: initial, doubling up to the maximum; reset after a connection is established. */
final class Backoff {
    private final long initialMillis;
    private final long maxMillis;
    private long nextMillis;

    Backoff(Duration initial, Duration max) {
        this.initialMillis = initial.toMillis();
        this.maxMillis = max.toMillis();
        this.nextMillis = initialMillis;
    }

    synchronized long nextDelayMillis() {
        long d = nextMillis;
        nextMillis = Math.min(maxMillis, Math.max(1, nextMillis * 2));
        return d;
    }

    synchronized void reset() {
        nextMillis = initialMillis;
    }
}
