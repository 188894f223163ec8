package org.jameskvs.delivery;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A lane's concurrency with slow start and back-off (as Postfix's per-destination concurrency, TCP's
 * congestion window): it starts at {@code initial}; each delivery that got through raises the limit by
 * one while in slow start, by 1/limit afterwards (about one per round); a connection-level failure
 * (421, connect or greeting failure) halves it (at least 1) and ends slow start. Never above
 * {@code max}. A waiting delivery holds no thread (it is a pending Mono).
 */
final class AdaptiveLimit {
    /** What a finished delivery says about the destination. */
    enum Feedback { GOT_THROUGH, CONNECTION_FAILED, NOTHING }

    private final int max;
    private double limit;
    private boolean slowStart = true;
    private int active;
    private final Deque<MonoSink<Void>> waiting = new ArrayDeque<>();

    AdaptiveLimit(int initial, int max) {
        this.max = max;
        this.limit = Math.max(1, Math.min(initial, max));
    }

    /** Completes when this delivery may start. */
    Mono<Void> acquire() {
        return Mono.create(sink -> {
            boolean now;
            synchronized (this) {
                now = active < (int) limit;
                if (now) {
                    active++;
                } else {
                    waiting.addLast(sink);
                }
            }
            if (now) {
                sink.success();
            }
        });
    }

    /**
     * Ends a delivery: CONNECTION_FAILED when it met a 421 or could not connect or be greeted,
     * GOT_THROUGH when the server took part in a transaction, NOTHING when no connection was tried.
     */
    void release(Feedback feedback) {
        List<MonoSink<Void>> start = new ArrayList<>();
        synchronized (this) {
            active--;
            if (feedback == Feedback.CONNECTION_FAILED) {
                limit = Math.max(1, limit / 2);
                slowStart = false;
            } else if (feedback == Feedback.GOT_THROUGH) {
                limit = Math.min(max, limit + (slowStart ? 1 : 1 / limit));
            }
            while (!waiting.isEmpty() && active < (int) limit) {
                active++;
                start.add(waiting.removeFirst());
            }
        }
        start.forEach(MonoSink::success);
    }

    synchronized int current() {
        return (int) limit;
    }
}
