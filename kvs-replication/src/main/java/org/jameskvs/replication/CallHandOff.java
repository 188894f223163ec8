package org.jameskvs.replication;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.netty.channel.EventLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries client calls onto the state machine's thread and their outcomes back to the callers.
 *
 * <p>Any thread submits a call; it runs on the core's event loop. Its outcome is handed to the
 * callback thread (callers' continuations never run on the core's loop), in the order the core
 * produced them, which is call order per queue. Outcomes are handed over in <em>batches</em>: one
 * executor hand-off per event-loop pass instead of one per call (a hand-off wakes the callback
 * thread: a futex call each time, which cost more than the replication itself at 100k calls/s).
 *
 * <p><b>Backstop.</b> A call submitted with an "unknown outcome" gets that outcome if the state
 * machine has given none after {@code backstopNanos} (it should never happen: the state machine
 * times every operation out itself after 5 request timeouts, except mutations parked on a rebuild
 * that is still making progress, and requests behind a large frame a node is still reading: while
 * either goes on, the backstop waits). Calls wait in one FIFO in submission
 * order, and every call has the same limit, so deadlines are in order too: the sweep on each tick
 * looks only at the head. This replaces a JDK timer task per call (a locked priority-queue insert
 * and removal on every call). The sweep runs on the core's loop, like everything that completes a
 * call, so a call gets exactly one outcome without any locking. Every backstop outcome is a state
 * machine bug: it is logged (WARN) and counted ({@link #backstopOutcomes()}, shown under the
 * management table), as is every call that failed inside the replication.
 *
 * <p><b>Back-pressure.</b> At most {@code maxInside} calls with a backstop (the data calls: put,
 * delete, read, ...) are inside the replication at once, from submission to outcome. A caller
 * beyond it waits for room, so a client that offers more than it can replicate slows its callers
 * down instead of growing an unbounded backlog in the core's task queue (that backlog is what made
 * the open-loop benchmark's JVM fall seconds behind, its GC pauses grow and its heartbeats go late:
 * report/latency.md, "Where the tail comes from", point 7). Calls made on the core's loop or on the
 * callback thread are never held (they would hold up what makes room) and take no room. A caller
 * that finds no room within the backstop time gets the "unknown" outcome (nothing was sent).
 */
final class CallHandOff {
    private static final Logger LOG = LoggerFactory.getLogger(CallHandOff.class);
    private final EventLoop core;
    private final ReplicationCore state;
    /** Core loop only: whether calls past the backstop time are still being worked on (then they wait). */
    private final BooleanSupplier progressing;
    private final Executor callbacks;
    private final long backstopNanos;
    /** The core's clock (the opener's {@link ObservedClock}: the client's own pauses do not count). */
    private final Clock clock;
    /** Room for calls inside the replication (null: unbounded). */
    private final java.util.concurrent.Semaphore room;
    private final int maxInside;
    /** The thread that delivers outcomes (the callback executor has one): never held for room. */
    private volatile Thread callbackThread;
    /** Callers that waited for room (back-pressure), since start: read from any thread. */
    private final java.util.concurrent.atomic.AtomicLong heldCallers = new java.util.concurrent.atomic.AtomicLong();
    private final ArrayDeque<Call<?>> awaiting = new ArrayDeque<>();
    /** Outcomes produced in this event-loop pass, not yet handed to the callback thread (core loop only). */
    private ArrayList<Call<?>> ready = new ArrayList<>();
    private final Runnable handOver = this::handOver;
    /** Calls that got the backstop's outcome (or failed inside the replication): read from any thread. */
    private final java.util.concurrent.atomic.AtomicLong backstopOutcomes = new java.util.concurrent.atomic.AtomicLong();

    CallHandOff(EventLoop core, ReplicationCore state, Executor callbacks, long backstopNanos) {
        this(core, state, callbacks, backstopNanos, Clock.SYSTEM, 0, null);
    }

    /**
     * @param clock       read on the core's loop only: the same clock the state machine judges time by
     * @param maxInside   calls with a backstop inside the replication at once (0: unbounded)
     * @param progressing whether the replication is still making progress on late calls (the backstop then
     *                    waits); null: {@code state}'s {@link ReplicationCore#lateCallsProgressing()}
     */
    CallHandOff(EventLoop core, ReplicationCore state, Executor callbacks, long backstopNanos, Clock clock,
                int maxInside, BooleanSupplier progressing) {
        this.progressing = progressing != null ? progressing : state != null ? state::lateCallsProgressing : () -> false;
        this.clock = clock;
        this.maxInside = maxInside;
        this.room = maxInside > 0 ? new java.util.concurrent.Semaphore(maxInside) : null;
        this.core = core;
        this.state = state;
        this.callbacks = callbacks;
        this.backstopNanos = backstopNanos;
    }

    /**
     * Runs {@code call} on the core's thread; its result is delivered on the callback thread.
     *
     * @param unknown builds the outcome given when the backstop expires or the call fails inside
     *                the replication; null: no backstop, failures complete exceptionally
     */
    <T> CompletableFuture<T> submit(Function<ReplicationCore, CompletableFuture<T>> call, Function<String, T> unknown) {
        Call<T> c = new Call<>(call, unknown);
        if (room != null && unknown != null && !core.inEventLoop() && Thread.currentThread() != callbackThread) {
            if (!room.tryAcquire()) {
                heldCallers.incrementAndGet();
                boolean got;
                try {
                    got = room.tryAcquire(backstopNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    got = false;
                }
                if (!got) {
                    c.out.complete(unknown.apply("no room in the replication client (" + maxInside
                            + " calls inside) within " + backstopNanos / 1_000_000 + " ms: not sent"));
                    return c.out;
                }
            }
            c.holdsRoom = true;
        }
        core.execute(c);
        return c.out;
    }

    /** Callers that had to wait for room (back-pressure), since start. */
    long heldCallers() {
        return heldCallers.get();
    }

    /** Calls that got the backstop's "unknown" outcome or failed inside the replication, since start. */
    long backstopOutcomes() {
        return backstopOutcomes.get();
    }

    /** Gives the backstop outcome to calls past their limit (core loop, on each tick). */
    void sweep(long now) {
        Call<?> head;
        while ((head = awaiting.peek()) != null) {
            if (head.done) {
                awaiting.poll();
            } else if (now - head.submittedAt > backstopNanos && !progressing.getAsBoolean()) {
                awaiting.poll();
                head.settle(null, new java.util.concurrent.TimeoutException());
            } else {
                return;
            }
        }
    }

    private void ready(Call<?> c) {
        if (ready.isEmpty()) {
            core.execute(handOver); // runs after this pass's reads and tasks: one hand-off for all
        }
        ready.add(c);
    }

    private void handOver() {
        List<Call<?>> batch = ready;
        ready = new ArrayList<>(Math.max(16, batch.size()));
        callbacks.execute(() -> {
            callbackThread = Thread.currentThread();
            for (int i = 0, n = batch.size(); i < n; i++) {
                batch.get(i).deliver();
            }
        });
    }

    /** One call: runs on the core (Runnable), receives the core's outcome (BiConsumer). */
    private final class Call<T> implements Runnable, BiConsumer<T, Throwable> {
        final CompletableFuture<T> out = new CompletableFuture<>();
        final Function<ReplicationCore, CompletableFuture<T>> call;
        final Function<String, T> unknown;
        long submittedAt;
        boolean done;
        /** Took room at submission (set before the hand-off to the core): given back with the outcome. */
        boolean holdsRoom;
        T value;
        Throwable failure;

        Call(Function<ReplicationCore, CompletableFuture<T>> call, Function<String, T> unknown) {
            this.call = call;
            this.unknown = unknown;
        }

        @Override
        public void run() {
            submittedAt = clock.nanoTime();
            if (unknown != null) {
                awaiting.add(this);
            }
            CompletableFuture<T> inner;
            try {
                inner = call.apply(state);
            } catch (RuntimeException e) {
                settle(null, e);
                return;
            }
            inner.whenComplete(this);
        }

        @Override
        public void accept(T v, Throwable t) {
            if (core.inEventLoop()) {
                settle(v, t);
            } else {
                core.execute(() -> settle(v, t)); // keep settle single-threaded
            }
        }

        /** Core loop only: the first outcome wins (the state machine's, or the backstop's). */
        void settle(T v, Throwable t) {
            if (done) {
                return;
            }
            done = true;
            if (holdsRoom) {
                holdsRoom = false;
                room.release();
            }
            while (awaiting.peek() != null && awaiting.peek().done) {
                awaiting.poll(); // keep the FIFO short between sweeps
            }
            if (t == null) {
                value = v;
            } else if (unknown != null) {
                Throwable cause = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
                String why = cause instanceof java.util.concurrent.TimeoutException
                        ? "no outcome within " + backstopNanos / 1_000_000 + " ms" : "replication failed: " + cause;
                value = unknown.apply(why);
                // The state machine owes every call an outcome: getting here is a bug, never routine.
                long n = backstopOutcomes.incrementAndGet();
                LOG.warn("replication: call backstop used ({} so far): {}; the call gets outcome {}", n, why, value,
                        cause instanceof java.util.concurrent.TimeoutException ? null : cause);
            } else {
                failure = t;
            }
            ready(this);
        }

        /** Callback thread. */
        void deliver() {
            if (failure != null) {
                out.completeExceptionally(failure);
            } else {
                out.complete(value);
            }
        }
    }
}
