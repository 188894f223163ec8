package org.jameskvs.james.queue;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes of accepted mail (answered 250): enqueues, and deletes of mail done, that have waited for
 * the KVS store longer than {@code acceptedMailRetryTimeout} and still wait: one count per write, for
 * the health check.
 */
public final class OverdueEnqueues {
    private final AtomicInteger waiting = new AtomicInteger();

    void started() {
        waiting.incrementAndGet();
    }

    void ended() {
        waiting.decrementAndGet();
    }

    /** How many accepted mails are waiting past the threshold now. */
    public int count() {
        return waiting.get();
    }
}
