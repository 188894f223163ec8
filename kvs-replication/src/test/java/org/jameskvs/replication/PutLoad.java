package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bounded writer on its own thread: puts of {@code bodyBytes} into the given queues in turn, at
 * most {@code window} in flight, at most {@code maxPuts} in all, each recorded in a
 * {@link PutLedger}. Failed puts are not retried (their outcome is what the test checks); after a
 * failure the writer pauses {@link #PAUSE_AFTER_FAILURE}, as a sender told 4xx comes back later,
 * so that a queue refusing writes is not flooded with puts refused at once.
 */
final class PutLoad implements AutoCloseable {
    static final Duration PAUSE_AFTER_FAILURE = Duration.ofMillis(50);
    private final PutLedger ledger;
    private final Map<String, KvsQueue> queues;
    private final String prefix;
    private final Semaphore window;
    private final int windowSize;
    private final long maxPuts;
    private final int perSecond;
    private final byte[] body;
    private final AtomicLong issued = new AtomicLong();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private volatile boolean stopped;
    private volatile boolean failedSincePause;
    private final Thread thread;

    /** @param queues by name, written in turn (a put per queue per round) */
    PutLoad(PutLedger ledger, Map<String, KvsQueue> queues, String prefix, int window, int bodyBytes, long maxPuts) {
        this(ledger, queues, prefix, window, bodyBytes, maxPuts, 0);
    }

    /** @param perSecond at most this many puts issued per second (0: as fast as the window allows) */
    PutLoad(PutLedger ledger, Map<String, KvsQueue> queues, String prefix, int window, int bodyBytes, long maxPuts,
            int perSecond) {
        this.perSecond = perSecond;
        this.ledger = ledger;
        this.queues = new LinkedHashMap<>(queues);
        this.prefix = prefix;
        this.window = new Semaphore(window);
        this.windowSize = window;
        this.maxPuts = maxPuts;
        this.body = new byte[bodyBytes];
        for (int i = 0; i < bodyBytes; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        this.thread = new Thread(this::run, "put-load-" + prefix);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        List<Map.Entry<String, KvsQueue>> targets = new ArrayList<>(queues.entrySet());
        long start = System.nanoTime();
        try {
            for (long i = 0; i < maxPuts && !stopped; i++) {
                if (perSecond > 0) {
                    long due = start + i * 1_000_000_000L / perSecond;
                    long early = due - System.nanoTime();
                    if (early > 0) {
                        Thread.sleep(early / 1_000_000, (int) (early % 1_000_000));
                    }
                }
                if (failedSincePause) {
                    failedSincePause = false;
                    Thread.sleep(PAUSE_AFTER_FAILURE.toMillis());
                }
                while (!window.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                    if (stopped) {
                        return;
                    }
                }
                Map.Entry<String, KvsQueue> t = targets.get((int) (i % targets.size()));
                String id = prefix + i;
                ledger.issued(t.getKey(), id);
                issued.incrementAndGet();
                t.getValue().put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], body).whenComplete((a, e) -> {
                    // Futures of the replicated queue never complete exceptionally; a null would be a bug.
                    ledger.outcome(id, a != null ? a : org.jameskvs.client.Ack.failed(
                            org.jameskvs.protocol.Status.INTERNAL_ERROR, "exceptional completion: " + e));
                    if (a != null && a.isOk()) {
                        acked.incrementAndGet();
                    } else {
                        failedSincePause = true;
                    }
                    answered.incrementAndGet();
                    window.release();
                });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    long acknowledged() {
        return acked.get();
    }

    /** Waits (bounded) until at least {@code n} puts of this load were acknowledged. */
    void awaitAcknowledged(long n, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (acked.get() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(prefix + ": " + acked.get() + " of " + n + " puts acknowledged within "
                        + max.toMillis() + " ms; failures " + ledger.failures());
            }
            Thread.sleep(20);
        }
    }

    /** Stops issuing and waits (bounded) for the outcome of every put issued. @return puts issued */
    long finish(Duration max) throws InterruptedException {
        stopped = true;
        return awaitOutcomes(max);
    }

    /** Waits (bounded) until every put is issued (up to {@code maxPuts}, or the stop) and answered. */
    long awaitOutcomes(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        while (answered.get() < issued.get() || window.availablePermits() < windowSize) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(prefix + ": " + (issued.get() - answered.get()) + " put(s) without an outcome after "
                        + max.toMillis() + " ms");
            }
            Thread.sleep(20);
        }
        if (thread.isAlive()) {
            throw new AssertionError(prefix + ": still issuing after " + max.toMillis() + " ms");
        }
        return issued.get();
    }

    @Override
    public void close() {
        stopped = true;
    }
}
