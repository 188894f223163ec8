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

    /** Ends a delivery: {@code connectionFailed} when it met a 421 or could not connect or be greeted. */
    void release(boolean connectionFailed) {
        List<MonoSink<Void>> start = new ArrayList<>();
        synchronized (this) {
            active--;
            if (connectionFailed) {
                limit = Math.max(1, limit / 2);
                slowStart = false;
            } else {
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
