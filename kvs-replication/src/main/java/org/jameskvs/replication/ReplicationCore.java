package org.jameskvs.replication;


import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The replication state machine of one James node: node health (heartbeats on both paths of every
 * node of the group) and one {@link QueueReplica} per open queue. Pure and deterministic: no
 * threads, no sleeps; time comes from the {@link Clock}, the network is the {@link NodeTransport};
 * it advances only through {@link #tick()}, {@link #onResponse} and client calls, all of which must
 * come from one thread. Futures handed out complete on that thread.
 */
public final class ReplicationCore {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationCore.class);

    final ReplicationConfig config;
    final Clock clock;
    final Placement placement;
    final int processId;
    /** The random numbers the core draws (queue incarnations); seeded from the process id in simulations. */
    final java.util.SplittableRandom random;
    private final NodeTransport transport;
    private final Map<String, NodeHealth> health = new LinkedHashMap<>();
    private final Map<String, QueueReplica> replicas = new LinkedHashMap<>();
    private final List<ReadOnlyReplica> readers = new ArrayList<>();
    /**
     * Per queue name, the fencing epochs of this process's opens that found the queue on no node
     * (see {@code OpenProcedure#newQueueWithNodeDown}): the empty queues they left are known to be
     * this process's own unfinished creation, not an earlier open's trace. Dropped once created.
     */
    final Map<String, java.util.Set<Long>> freshFences = new java.util.HashMap<>();
    /** Nodes whose store refused a write: no rebuild of any queue onto them for a while. */
    final RefusingStores refusingStores = new RefusingStores();
    /** Record reads in flight ({@link #peekRecord}). */
    private final RecordPeeks peeks = new RecordPeeks(this);
    /** Requests awaiting an answer, by token: this table sees every request and answer. */
    private final TokenTable<Waiting> pending = new TokenTable<>();

    /**
     * A request awaiting its answer: the callback and the node path it went on. Any answer the node
     * sent on that path proves the path alive (see {@link #onResponse}).
     */
    private record Waiting(NodeHealth health, int path, Consumer<NodeResponse> onAnswer) {
    }
    private long nextToken = 1;
    private Consumer<String> eventSink;
    /** When a node last drained bytes of a frame still being sent (core clock; see {@link #framesBeingSent}). */
    private long lastSendProgressAt;

    public ReplicationCore(ReplicationConfig config, Clock clock, NodeTransport transport) {
        this(config, clock, transport, new java.security.SecureRandom().nextInt(1 << 20),
                new java.util.SplittableRandom(new java.security.SecureRandom().nextLong()));
    }

    /**
     * A core whose every choice follows from its inputs (simulations: a seed replays exactly).
     *
     * @param processId 20 bits that tell this process's epochs apart from another process that
     *                  picks the same epoch counter (random by default; fixed in simulations); also
     *                  the seed of the random numbers the core draws (queue incarnations)
     */
    public ReplicationCore(ReplicationConfig config, Clock clock, NodeTransport transport, int processId) {
        this(config, clock, transport, processId, new java.util.SplittableRandom(processId));
    }

    private ReplicationCore(ReplicationConfig config, Clock clock, NodeTransport transport, int processId,
                            java.util.SplittableRandom random) {
        this.random = random;
        this.processId = processId & 0xFFFFF;
        this.config = config;
        this.clock = clock;
        this.transport = transport;
        this.placement = new Placement(config);
        long now = clock.nanoTime();
        for (String n : config.nodeNames()) {
            health.put(n, new NodeHealth(n, now));
        }
        lastSendProgressAt = now - (1L << 62);
    }

    /** Receives every state change as a line of text (tests, admin); default: debug log only. */
    public void onEvent(Consumer<String> sink) {
        this.eventSink = sink;
    }

    // ------------------------------------------------------------------ API

    /**
     * Opens a queue for writing on its two copies (creating them, or reclaiming them with a higher
     * epoch). Fails with QUEUE_LOCKED when another owner holds it (see {@link #takeOver}).
     * The result's {@code queue} is null: wrap the replica with {@link #replica(String)}.
     */
    public CompletableFuture<OpenResult> open(String queue, OpenOptions options) {
        return open(queue, options, false);
    }

    /** Like {@link #open} but takes the queue from another owner: a higher epoch fences it. */
    public CompletableFuture<OpenResult> takeOver(String queue, OpenOptions options) {
        return open(queue, options, true);
    }

    private CompletableFuture<OpenResult> open(String queue, OpenOptions options, boolean force) {
        CompletableFuture<OpenResult> f = new CompletableFuture<>();
        QueueReplica existing = replicas.get(queue);
        if (existing != null && existing.phase != QueueReplica.Phase.FENCED) {
            f.complete(new OpenResult(org.jameskvs.protocol.Status.QUEUE_LOCKED, "already open here", null, -1,
                    existing.epoch, 0));
            return f;
        }
        QueueReplica r = new QueueReplica(this, queue, options.owner());
        replicas.put(queue, r);
        r.open(options, force, f);
        return f;
    }

    /**
     * A read-only reader of a queue (see {@link ReadOnlyReplica}): no fencing, reads from an in-sync
     * copy named by the newest replication record, following the copies. Complete its
     * {@code open()} before use; any number of readers may exist besides this process's writer.
     */
    ReadOnlyReplica newReader(String queue) {
        ReadOnlyReplica r = new ReadOnlyReplica(this, queue);
        readers.add(r);
        return r;
    }

    void forgetReader(ReadOnlyReplica r) {
        readers.remove(r);
    }

    /** Whether a reader of that queue is open (its read handles are in use). */
    boolean hasReader(String queue) {
        return readers.stream().anyMatch(r -> r.name.equals(queue));
    }

    public QueueReplica replica(String queue) {
        return replicas.get(queue);
    }

    public CompletableFuture<Ack> put(QueueReplica q, byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return put(NodeOp.PUT, q, id, priority, notBefore, state, body);
    }

    /**
     * A replacing PUT on both copies. During a rebuild it needs no special care: a copy of the old
     * version that reaches the target later is refused there as DUPLICATE_ID (ignored by the copier),
     * and one that got there first is replaced.
     */
    public CompletableFuture<Ack> putReplacing(QueueReplica q, byte[] id, int priority, long notBefore, byte[] state,
                                              byte[] body) {
        return put(NodeOp.PUT_REPLACING, q, id, priority, notBefore, state, body);
    }

    private CompletableFuture<Ack> put(NodeOp kind, QueueReplica q, byte[] id, int priority, long notBefore,
                                       byte[] state, byte[] body) {
        ReplicaOp op = new ReplicaOp(kind, ReplicaOp.Purpose.CLIENT, clock.nanoTime());
        op.id = id;
        op.priority = priority;
        op.notBefore = notBefore;
        op.state = state == null ? new byte[0] : state;
        op.body = body == null ? new byte[0] : body;
        if (Ids.isReserved(id)) {
            return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.BAD_REQUEST,
                    "ids starting with a zero byte are reserved"));
        }
        return q.mutate(op);
    }

    public CompletableFuture<Ack> delete(QueueReplica q, byte[] id) {
        ReplicaOp op = new ReplicaOp(NodeOp.DELETE, ReplicaOp.Purpose.CLIENT, clock.nanoTime());
        op.id = id;
        return q.mutate(op);
    }

    public CompletableFuture<Ack> replace(QueueReplica q, byte[] id, int priority, long notBefore, byte[] state) {
        ReplicaOp op = new ReplicaOp(NodeOp.REPLACE, ReplicaOp.Purpose.CLIENT, clock.nanoTime());
        op.id = id;
        op.priority = priority;
        op.notBefore = notBefore;
        op.state = state == null ? new byte[0] : state;
        return q.mutate(op);
    }

    public CompletableFuture<Ack> clear(QueueReplica q) {
        return q.mutate(new ReplicaOp(NodeOp.CLEAR, ReplicaOp.Purpose.CLIENT, clock.nanoTime()));
    }

    public CompletableFuture<GetResult> get(QueueReplica q, byte[] id) {
        ReplicaOp op = new ReplicaOp(NodeOp.GET, ReplicaOp.Purpose.CLIENT, clock.nanoTime());
        op.id = id;
        op.get = new CompletableFuture<>();
        q.readOp(op);
        return op.get;
    }

    public CompletableFuture<ReadResult> read(QueueReplica q, long from, int maxCount, int maxBytes, long readyBefore) {
        ReplicaOp op = new ReplicaOp(NodeOp.READ, ReplicaOp.Purpose.CLIENT, clock.nanoTime());
        op.fromPosition = from;
        op.maxCount = maxCount;
        op.maxBytes = maxBytes;
        op.readyBefore = readyBefore;
        op.read = new CompletableFuture<>();
        q.readOp(op);
        return op.read;
    }

    public CompletableFuture<QueueStat> stat(QueueReplica q) {
        ReplicaOp op = new ReplicaOp(NodeOp.STAT, ReplicaOp.Purpose.CLIENT, clock.nanoTime());
        op.stat = new CompletableFuture<>();
        q.readOp(op);
        return op.stat;
    }

    public void close(QueueReplica q) {
        q.close();
    }

    /** The management table (paper Table I): a snapshot, safe to hand to other threads. */
    public ManagementTable table() {
        List<ManagementTable.Row> rows = new ArrayList<>();
        for (QueueReplica r : replicas.values()) {
            rows.addAll(ManagementTable.rowsOf(r));
        }
        Map<String, NetState[]> nodes = new LinkedHashMap<>();
        for (NodeHealth h : health.values()) {
            nodes.put(h.node, new NetState[]{h.state(NodePath.ACTIVE), h.state(NodePath.STANDBY)});
        }
        return new ManagementTable(rows, nodes);
    }

    /** One queue's management table as an outsider sees it (see {@link PeekedTable}); nothing is fenced. */
    CompletableFuture<ManagementTable> peekTable(String queue) {
        return peekRecord(queue).thenApply(p -> PeekedTable.of(queue, p, config.nodeNames(), this::health));
    }

    /**
     * What {@link #peekRecord} found: the newest record (null if none), how many nodes answered,
     * and every node that has the queue and answered the record read ({@code holders}, group order).
     */
    record Peeked(MembershipRecord record, int answered, List<Holder> holders) {
        Peeked(MembershipRecord record, int answered) {
            this(record, answered, List.of());
        }
    }

    /**
     * A node that holds a queue of that name: the record it holds (null: none), the path its read
     * handle was opened on, and its OPEN answer (transaction number; size including the record;
     * whether its server flags the copy DAMAGED, see kvs-protocol's QueueFlags).
     */
    record Holder(String node, NodePath path, MembershipRecord record, long txn, long epoch, long size,
                  boolean damaged) {
        Holder(String node, NodePath path, MembershipRecord record, long txn, long epoch, long size) {
            this(node, path, record, txn, epoch, size, false);
        }
    }

    /**
     * Reads the newest replication record of a queue from every reachable node (read handles, no
     * fencing): what a lease watcher and a read-only reader need. A node answers when it has the
     * queue (record or not) or says it has no such queue. Completes once every node answered, or
     * after {@code requestTimeout} with what was found.
     */
    CompletableFuture<Peeked> peekRecord(String queue) {
        return peeks.peek(queue);
    }

    /**
     * Whether calls past the adapter's backstop time are still being worked on, so that the backstop
     * waits for them: a rebuild making progress ({@link #rebuildProgressing()}) or a frame still being
     * sent ({@link #framesBeingSent()}).
     */
    boolean lateCallsProgressing() {
        return rebuildProgressing() || framesBeingSent();
    }

    /**
     * Whether a rebuild of some queue is making progress: mutations parked on it wait until it
     * completes (see {@code Timers.failParked}), so the adapter's backstop waits too.
     */
    boolean rebuildProgressing() {
        long now = clock.nanoTime();
        for (QueueReplica r : replicas.values()) {
            if (r.timers.rebuildProgressing(now)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether some node drained bytes of a frame still being sent within the last request timeout:
     * the requests behind it (and the calls waiting on them) are not late, they wait their turn.
     */
    boolean framesBeingSent() {
        return clock.nanoTime() - lastSendProgressAt <= config.requestTimeout().toNanos();
    }

    public boolean nodeUp(String node) {
        return health(node).up();
    }

    // ------------------------------------------------------------------ driving

    /** Heartbeats, request timeouts, lease renewals. Call every {@code tick} (50 ms). */
    public void tick() {
        long now = clock.nanoTime();
        long interval = config.heartbeatInterval().toNanos();
        long timeout = config.heartbeatTimeout().toNanos();
        for (NodeHealth h : health.values()) {
            for (NodePath p : NodePath.values()) {
                int i = p.ordinal();
                if (h.pingToken[i] != 0 && now - h.lastPingSent[i] > timeout) {
                    forget(h.pingToken[i]);
                    h.pingToken[i] = 0;
                }
                if (h.pingToken[i] == 0 && now - h.lastPingSent[i] >= interval) {
                    NodeRequest ping = NodeRequest.ping(nextToken(), h.node, p);
                    h.pingToken[i] = ping.token();
                    h.lastPingSent[i] = now;
                    send(ping, r -> onPing(h, p, ping.token(), r));
                }
                if (h.state(p) != NetState.NG && now - h.lastOk[i] > timeout) {
                    pathNg(h.node, p);
                }
            }
        }
        for (QueueReplica r : new ArrayList<>(replicas.values())) {
            r.timers.tick(now);
        }
        for (ReadOnlyReplica r : new ArrayList<>(readers)) {
            r.tick(now);
        }
        peeks.expire(now);
    }

    private void onPing(NodeHealth h, NodePath p, long token, NodeResponse r) {
        int i = p.ordinal();
        if (h.pingToken[i] == token) {
            h.pingToken[i] = 0;
        }
        if (!r.isOk()) {
            return; // silence, then the heartbeat timeout, marks the path NG
        }
        h.lastOk[i] = clock.nanoTime();
        if (h.state(p) == NetState.NG) {
            boolean wasDown = !h.up();
            h.set(p, NetState.READY);
            log(null, h.node + "/" + p + " READY again");
            if (wasDown) {
                for (QueueReplica q : new ArrayList<>(replicas.values())) {
                    q.nodeEvents.onNodeUp(h.node);
                }
            }
        }
    }

    /** A node's answer; unknown or forgotten tokens (late answers) are ignored. */
    public void onResponse(NodeResponse r) {
        Waiting w = pending.remove(r.token());
        if (w != null) {
            if (fromTheNode(r.status())) {
                // Any answer proves the path alive, not only a PING's: under load the PING waits
                // behind the data on the same connection, and a path that keeps answering data
                // must not be declared silent because its PING answer is late.
                w.health().answered(w.path(), clock.nanoTime());
            }
            w.onAnswer().accept(r);
        }
    }

    /**
     * The connection of a path moved bytes (an answer arrived, or the socket took bytes of a request
     * still being sent): proof of life for the path and for the requests waiting on it, like an
     * answer. A frame near the 64 MiB limit takes seconds to send on a busy machine, and the PING
     * and every answer on its path queue behind it; without this, every heartbeat behind such a
     * frame timed out and a healthy copy was isolated. A node frozen or cut off stops taking bytes
     * once the socket buffers are full (a few MB), so it is still found silent.
     */
    void connectionProgressed(String node, NodePath p, boolean sending) {
        NodeHealth h = health.get(node);
        if (h == null || h.state(p) == NetState.NG) {
            return; // only a PING answer revives an NG path
        }
        long now = clock.nanoTime();
        h.answered(p.ordinal(), now);
        if (sending) {
            lastSendProgressAt = now;
        }
        for (QueueReplica q : replicas.values()) {
            for (Member m : q.members) {
                if (m.node.equals(node) && m.path == p) {
                    m.lastAnswerAt = Math.max(m.lastAnswerAt, now);
                    if (sending) {
                        m.lastSendProgressAt = now;
                    }
                }
            }
        }
    }

    /**
     * Statuses only a node's answer carries (the client library makes up TIMEOUT, CONNECTION_LOST,
     * BACKLOG_FULL, BAD_REQUEST, ... locally, without hearing from the node): proof of life.
     */
    private static boolean fromTheNode(org.jameskvs.protocol.Status s) {
        return switch (s) {
            case OK, NOT_FOUND, DUPLICATE_ID, NO_SUCH_QUEUE, STALE_EPOCH, QUEUE_LOCKED, QUEUE_FULL, SEQ_TOO_OLD -> true;
            default -> false;
        };
    }

    /** Marks a path NG (heartbeat or request timeout) and tells every queue. */
    void pathNg(String node, NodePath p) {
        NodeHealth h = health(node);
        if (h.state(p) == NetState.NG) {
            return;
        }
        h.set(p, NetState.NG);
        // Let the heartbeat prove it alive again before it counts as READY.
        h.lastOk[p.ordinal()] = Math.min(h.lastOk[p.ordinal()], clock.nanoTime() - config.heartbeatTimeout().toNanos() - 1);
        log(null, node + "/" + p + " NG");
        for (QueueReplica q : new ArrayList<>(replicas.values())) {
            q.nodeEvents.onPathDown(node, p);
        }
        if (!h.up()) {
            for (QueueReplica q : new ArrayList<>(replicas.values())) {
                q.nodeEvents.onNodeDown(node);
            }
        }
    }

    void send(NodeRequest r, Consumer<NodeResponse> onAnswer) {
        pending.put(r.token(), new Waiting(health(r.node()), r.path().ordinal(), onAnswer));
        transport.send(r);
    }

    void forget(long token) {
        pending.remove(token);
    }

    long nextToken() {
        return nextToken++;
    }

    /** Every node of the group, group order. */
    Iterable<NodeHealth> healths() {
        return health.values();
    }

    NodeHealth health(String node) {
        NodeHealth h = health.get(node);
        if (h == null) {
            throw new IllegalArgumentException("node " + node + " is not in the group");
        }
        return h;
    }

    void forgetReplica(QueueReplica r) {
        replicas.remove(r.name, r);
    }

    int pendingCount() {
        return pending.size();
    }

    void log(String queue, String event) {
        String line = (queue == null ? "" : queue + ": ") + event;
        LOG.debug(line);
        if (eventSink != null) {
            eventSink.accept(line);
        }
    }
}
