package org.jameskvs.replication;

import org.jameskvs.client.ClientTls;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Status;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Opens replicated queues: the entry point of the James plug-in, with the shape of
 * {@code KvsClient::open}. Runs the replication state machine ({@link ReplicationCore}) and the I/O
 * of its {@code KvsClient} connections (two per node: active and standby path) on one Netty event
 * loop, with the real clock. Results are handed to the caller on a separate callback thread, in
 * order and in batches ({@link CallHandOff}), so that callers never run on (or block) the state
 * machine's thread.
 *
 * <pre>
 * ReplicatedQueueOpener opener = ReplicatedQueueOpener.start(ReplicationConfig.fromProperties(p));
 * KvsQueue q = opener.open("spool", OpenOptions.writer("james-1", 1)).join().orThrow();
 * q.put(id, 0, 0, state, body).thenAccept(ack -&gt; ... ack.isOk() means two copies ...);
 * </pre>
 */
public final class ReplicatedQueueOpener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedQueueOpener.class);

    private final ReplicationConfig config;
    /**
     * The longest a client call may wait for its outcome: past it, the call completes as TIMEOUT
     * (outcome unknown) whatever the state machine does. The state machine's own limit is 5 request
     * timeouts (longer only for mutations parked on a rebuild that is making progress: the backstop
     * waits while one is); this backstop (6) keeps the "exactly one outcome per call" promise even if
     * it loses track of an operation (seen once under extreme machine load right after a reclaim).
     */
    private final long callBackstopMillis;
    private final EventLoopGroup coreGroup;
    private final EventLoop coreThread;
    private final ExecutorService callbacks;
    private final KvsNodeTransport transport;
    private final ReplicationCore core;
    /** The core's clock (read on the core's thread only). */
    private final ObservedClock clock;
    private final CallHandOff calls;
    /** Extra receivers of the state machine's events (tests wait for events instead of sleeping). */
    private final java.util.List<java.util.function.Consumer<String>> eventListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    private ReplicatedQueueOpener(ReplicationConfig config, ClientTls tls) {
        this.config = config;
        this.callBackstopMillis = config.requestTimeout().multipliedBy(6).toMillis();
        // One Netty event loop runs the state machine AND the I/O of every node connection: answers
        // reach the core on the thread that read them and requests are written by the thread that
        // decided them (no lock-based executor hand-off per request, as Aeron's duty-cycle agents).
        this.coreGroup = new NioEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "kvs-replication");
            t.setDaemon(true);
            return t;
        });
        this.coreThread = coreGroup.next();
        this.callbacks = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kvs-replication-callbacks");
            t.setDaemon(true);
            return t;
        });
        ReplicationCore[] holder = new ReplicationCore[1];
        this.transport = new KvsNodeTransport(config, tls, coreThread, r -> holder[0].onResponse(r));
        // The state machine judges silence by observed time: a stretch in which this process could
        // not run (GC, CPU starvation, a loop far behind) is not a node's silence (ObservedClock).
        this.clock = new ObservedClock(Clock.SYSTEM, config.tick().toNanos() * 2);
        this.core = new ReplicationCore(config, clock, transport);
        holder[0] = core;
        this.calls = new CallHandOff(coreThread, core, callbacks, TimeUnit.MILLISECONDS.toNanos(callBackstopMillis),
                clock, config.maxCallsInside(), null);
        core.onEvent(e -> {
            if (e.contains("ALARM") || e.contains("DAMAGED") || e.contains("DATA LOSS")) {
                LOG.warn("replication: {}", e); // an operator must see these
            } else {
                LOG.info("replication: {}", e);
            }
            eventListeners.forEach(l -> l.accept(e));
        });
        long tick = config.tick().toMillis();
        coreThread.scheduleAtFixedRate(this::tick, tick, tick, TimeUnit.MILLISECONDS);
    }

    /** Connects to every node over plain TCP (in the background) and starts the heartbeats. */
    public static ReplicatedQueueOpener start(ReplicationConfig config) {
        return start(config, ClientTls.OFF);
    }

    /**
     * Connects to every node (in the background), both paths with the same TLS settings (and client
     * certificate, if any), and starts the heartbeats.
     */
    public static ReplicatedQueueOpener start(ReplicationConfig config, ClientTls tls) {
        return new ReplicatedQueueOpener(config, tls);
    }

    private void tick() {
        try {
            transport.reportProgress(core::connectionProgressed);
            core.tick();
            calls.sweep(clock.nanoTime());
        } catch (RuntimeException e) {
            LOG.error("replication tick failed", e);
        }
    }

    /**
     * Opens a queue for writing on its two copies: creates it, or reclaims it (same owner, epoch + 1,
     * recovery from an in-sync copy). Fails with QUEUE_LOCKED when another owner holds it: see
     * {@link #takeOver} and {@link #takeOverWhenLeaseExpires}.
     *
     * <p>{@link OpenMode#READ} gives a read-only handle for readers of other writers' queues (the
     * OR-set repository's logs), not for the writer: no fencing; reads come from an in-sync copy
     * named by the newest replication record (never from the empty queue that fencing leaves on a
     * node that is not a copy), possibly behind the other copy, and follow the copies when they move
     * or the serving one fails, reporting each switch through {@code ReadResult.positionSpace()}
     * (see {@link ReadOnlyReplica}). Fails with NO_SUCH_QUEUE when no node has the queue, TIMEOUT
     * when no in-sync copy can be found, CONNECTION_LOST when no node answers.
     */
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        if (options.mode() == OpenMode.READ) {
            return call(c -> {
                ReadOnlyReplica reader = c.newReader(name);
                return reader.open().thenApply(r -> r.isOk()
                        ? new OpenResult(Status.OK, null, new ReadOnlyCopy(this, reader), r.txn(), r.epoch(), r.size())
                        : r);
            }, why -> new OpenResult(Status.TIMEOUT, why, null, -1, 0, 0));
        }
        return openWith(name, options, false);
    }

    /**
     * Waits (bounded) until at least {@code nodes} nodes are connected: start-up connects in the
     * background. @return whether that many were connected in time.
     */
    public boolean awaitConnected(int nodes, java.time.Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (transport.connectedNodes() < nodes) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** The queues that exist on any reachable node of the group (merged by name). */
    public CompletableFuture<org.jameskvs.client.ListResult> listQueues() {
        // Completed on the core's event loop: hand the caller's continuations to the callback thread.
        return transport.listQueues().thenApplyAsync(r -> r, callbacks);
    }

    /**
     * The lease on a queue as the reachable nodes show it now, read with read handles: fences
     * nothing, opens nothing for writing. Empty when no node that answered within the request
     * timeout holds a replication record of the queue (it never had a writer, or no copy answered).
     */
    public CompletableFuture<java.util.Optional<Lease>> peekLease(String name) {
        return onCore(c -> c.peekRecord(name).thenApply(peeked -> java.util.Optional.ofNullable(peeked.record())
                .map(rec -> new Lease(rec.owner(), rec.epoch(), rec.seq()))));
    }

    /**
     * Admin: one queue's management table read from the nodes with read handles (fences nothing):
     * each node holding it, its sync state in the newest replication record, its transaction number
     * and epoch (see {@link PeekedTable}). For the writer's own live table see {@link #managementTable}.
     */
    public CompletableFuture<ManagementTable> peekTable(String name) {
        return onCore(c -> c.peekTable(name));
    }

    /** Admin: takes the queue from whichever James node holds it (a higher epoch fences it). */
    public CompletableFuture<OpenResult> takeOver(String name, OpenOptions options) {
        return openWith(name, options, true);
    }

    /**
     * Watches the owner's lease (see {@link LeaseWatcher}) and takes the queue over once the lease
     * has not been renewed for {@code leaseTimeout}; completes with the takeover's result.
     */
    public CompletableFuture<OpenResult> takeOverWhenLeaseExpires(String name, OpenOptions options) {
        CompletableFuture<OpenResult> out = new CompletableFuture<>();
        LeaseWatcher watcher = new LeaseWatcher(config.leaseTimeout());
        coreThread.execute(() -> watchLease(name, options, watcher, out));
        return out;
    }

    private void watchLease(String name, OpenOptions options, LeaseWatcher watcher, CompletableFuture<OpenResult> out) {
        if (out.isDone()) {
            return;
        }
        core.peekRecord(name).thenAccept(peeked -> {
            // Too few answers says nothing about the owner: keep watching.
            boolean heard = peeked.answered() >= config.nodes().size() - 1;
            MembershipRecord rec = peeked.record();
            if (heard && watcher.expired(clock.nanoTime(), rec)) {
                LOG.info("replication: lease on {} expired ({}); taking over", name, rec == null ? "no record" : rec.owner());
                core.takeOver(name, options).thenAccept(r -> {
                    if (r.isOk() || r.status() == Status.STALE_EPOCH) {
                        QueueReplica replica = core.replica(name);
                        OpenResult result = r.isOk() ? new OpenResult(Status.OK, null, new ReplicatedQueue(this, replica),
                                r.txn(), replica.epochCounter(), r.size()) : r;
                        callbacks.execute(() -> out.complete(result));
                    } else {
                        rescheduleWatch(name, options, watcher, out); // e.g. nodes unreachable: later
                    }
                });
            } else {
                rescheduleWatch(name, options, watcher, out);
            }
        });
    }

    private void rescheduleWatch(String name, OpenOptions options, LeaseWatcher watcher, CompletableFuture<OpenResult> out) {
        coreThread.schedule(() -> watchLease(name, options, watcher, out), config.leaseRenew().toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private CompletableFuture<OpenResult> openWith(String name, OpenOptions options, boolean force) {
        if (options.mode() != OpenMode.WRITE) {
            return CompletableFuture.completedFuture(new OpenResult(Status.BAD_REQUEST,
                    "replicated queues are opened for writing", null, -1, 0, 0));
        }
        return onCore(c -> (force ? c.takeOver(name, options) : c.open(name, options)).thenApply(r -> {
            if (!r.isOk()) {
                return r;
            }
            QueueReplica replica = c.replica(name);
            return new OpenResult(Status.OK, null, new ReplicatedQueue(this, replica), r.txn(), replica.epochCounter(),
                    r.size());
        }));
    }

    /**
     * Calls that got no outcome from the state machine in time (the backstop gave them TIMEOUT) or
     * failed inside it, since start: each is a bug, logged as a WARN; this counts them for metrics.
     */
    public long backstopOutcomes() {
        return calls.backstopOutcomes();
    }

    /** Callers that had to wait for room in the replication client ({@code maxCallsInside}), since start. */
    public long heldCallers() {
        return calls.heldCallers();
    }

    /** Time discounted so far as this process's own pauses (see {@link ObservedClock}), in milliseconds. */
    long pausedMillis() {
        return clock.pausedNanos() / 1_000_000;
    }

    /** Receives every state-machine event line (on the core's thread: must not block). For tests and diagnostics. */
    void listen(java.util.function.Consumer<String> listener) {
        eventListeners.add(listener);
    }

    /** The management table (paper Table I), for metrics and the admin command. */
    public ManagementTable managementTable() {
        // Built on the state machine's thread, handed over directly (not via the callback thread,
        // so that calling this from a callback cannot deadlock).
        return CompletableFuture.supplyAsync(core::table, coreThread).join();
    }

    /** Runs a call on the state machine's thread; its result is delivered on the callback thread. */
    <T> CompletableFuture<T> onCore(Function<ReplicationCore, CompletableFuture<T>> call) {
        return calls.submit(call, null);
    }

    /**
     * Like {@link #onCore}, and the call gets exactly one outcome, never an exceptional completion: a
     * failure inside the replication, or no outcome within {@link #callBackstopMillis}, becomes the
     * "unknown" outcome built by {@code unknown}.
     */
    <T> CompletableFuture<T> call(Function<ReplicationCore, CompletableFuture<T>> call, Function<String, T> unknown) {
        return calls.submit(call, unknown);
    }

    void closeQueue(QueueReplica replica) {
        coreThread.execute(() -> {
            core.close(replica);
            // Read handles of that queue are the readers' too: released with the last of them.
            transport.closeQueue(replica.name(), true, !core.hasReader(replica.name()));
        });
    }

    void closeReader(ReadOnlyReplica reader) {
        coreThread.execute(() -> {
            reader.close();
            if (!core.hasReader(reader.name())) {
                transport.closeQueue(reader.name(), false, true); // a writer's probes open them again when needed
            }
        });
    }

    @Override
    public void close() {
        transport.close(); // the connections close on the still running loop
        coreGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3_000);
        callbacks.shutdown();
    }
}
