package org.jameskvs.replication;

import org.jameskvs.client.GetResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A KVS server model with the semantics of the wire protocol (package-info of kvs-protocol):
 * per-connection handles, epochs and the writer registry, positions, transaction numbers.
 */
final class SimServer implements SimNode {
    final String name;
    final Map<String, SimQueue> queues = new HashMap<>();
    private final Map<Long, Map<Integer, Handle>> handles = new HashMap<>();
    private final Map<String, Long> writers = new HashMap<>();
    final Set<Long> liveConnections = new HashSet<>();
    private int nextHandle = 1;
    /** The store id (a real server draws one per data directory): a new one after a restart without data. */
    private long store;

    record Handle(SimQueue queue, boolean write, long epoch) {
    }

    static final class Msg {
        final long position;
        final byte[] id;
        int priority;
        long notBefore;
        byte[] state;
        final byte[] body;

        Msg(long position, byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            this.position = position;
            this.id = id;
            this.priority = priority;
            this.notBefore = notBefore;
            this.state = state;
            this.body = body;
        }

        StoredMessage stored() {
            return new StoredMessage(position, id, priority, notBefore, state, body);
        }
    }

    static final class SimQueue {
        final String name;
        long epoch;
        String owner = "";
        long txn;
        /** Data mutations applied and their rolling digest, as the real server's QueueDigest (another fold, same inputs). */
        long seq;
        long digest;
        long nextPos = 1;
        /** Recovery found records of it lost (the server's DAMAGED queue flag); CLEAR ends it. */
        boolean damaged;
        final TreeMap<Long, Msg> byPos = new TreeMap<>();
        final Map<String, Msg> byId = new HashMap<>();
        /** Outcomes of sequenced mutations by seq (the real server keeps the latest 2,048, restored by replay). */
        final Map<Long, NodeResponse> outcomes = new HashMap<>();

        SimQueue(String name) {
            this.name = name;
        }

        /**
         * As the real store: a PUT's position is its seq (the queue's seq after it) or the next
         * position when higher, or the one the writer gives (a rebuild's copy).
         */
        long positionOfPut(long given) {
            long p = given > 0 ? given : Math.max(seq + 1, nextPos);
            if (byPos.containsKey(p)) {
                // The real store would hold two messages at one position: a cursor would skip one.
                throw new IllegalStateException("queue " + name + ": position " + p + " is taken");
            }
            nextPos = Math.max(nextPos, p + 1);
            return p;
        }

        void applied(int op, byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            seq++;
            long content = java.util.Objects.hash(priority, notBefore, java.util.Arrays.hashCode(state),
                    java.util.Arrays.hashCode(body));
            digest = mix(mix(digest ^ seq * 0x9E3779B97F4A7C15L) + op) ^ ((long) java.util.Arrays.hashCode(id) << 32 | content & 0xFFFFFFFFL);
            digest = mix(digest);
        }

        static long mix(long z) {
            z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
            z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
            return z ^ (z >>> 33);
        }
    }

    /** Sequenced mutations answered from a stored outcome, and PUTs refused DUPLICATE_ID (tests look). */
    int repeatsAnswered;
    int duplicatesAnswered;

    SimServer(String name) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public QueueView view(String queue) {
        SimQueue q = queues.get(queue);
        if (q == null) {
            return null;
        }
        List<StoredMessage> messages = new ArrayList<>();
        for (Msg m : q.byPos.values()) {
            messages.add(m.stored());
        }
        return new QueueView(q.txn, q.epoch, q.seq, q.digest, q.damaged, messages);
    }

    @Override
    public Probe probe(String queue, String id) {
        SimQueue q = queues.get(queue);
        return q == null ? null : new Probe(q.byId.containsKey(Ids.key(id.getBytes(java.nio.charset.StandardCharsets.UTF_8))), q.epoch);
    }

    @Override
    public void connectionOpened(long conn) {
        liveConnections.add(conn);
    }

    @Override
    public void connectionClosed(long conn) {
        liveConnections.remove(conn);
        handles.remove(conn);
    }

    /** Restart: the process is new; data survives only if {@code keepData}. */
    @Override
    public void restart(boolean keepData) {
        liveConnections.clear();
        handles.clear();
        writers.clear();
        if (!keepData) {
            queues.clear();
            store++;
        }
    }

    /**
     * A journal record of a live message lost at recovery (call between crash and restart): the
     * message is gone, the transaction number stays (the records after it counted it), and the
     * queue is flagged damaged, as the real server's replay does for a bad record in an older file.
     */
    void loseMessage(String queue, String id) {
        SimQueue q = queues.get(queue);
        Msg m = q.byId.remove(Ids.key(id.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        if (m == null) {
            throw new IllegalArgumentException("no message " + id + " in " + queue);
        }
        q.byPos.remove(m.position);
        q.damaged = true;
        q.seq--; // replay folds the records it has: one mutation fewer, another digest from there on
        q.digest = ~q.digest * 31;
    }

    /**
     * A REPLACE record lost at recovery and seen by no replay check (say the first record of the
     * oldest journal file kept): the message has its older state back, the transaction number and
     * the size are unchanged, no DAMAGED flag; only the seq (one mutation fewer replayed) and the
     * digest show it, as the real server's replay computes them.
     */
    void loseReplaceUnflagged(String queue, String id, byte[] olderState) {
        SimQueue q = queues.get(queue);
        Msg m = q.byId.get(Ids.key(id.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        m.state = olderState;
        q.seq--;
        q.digest = ~q.digest * 31;
    }

    /** @param handleId handle the client used (0 for OPEN/PING) */
    @Override
    public NodeResponse apply(long conn, int handleId, NodeRequest r) {
        long tok = r.token();
        switch (r.op()) {
            case PING -> {
                return NodeResponse.of(tok, Status.OK, 0, 0, null);
            }
            case OPEN_WRITE, OPEN_READ -> {
                return open(conn, r);
            }
            default -> { }
        }
        Handle h = handles.getOrDefault(conn, Map.of()).get(handleId);
        if (h == null) {
            return NodeResponse.of(tok, Status.BAD_HANDLE, 0, 0, "bad handle");
        }
        SimQueue q = h.queue;
        if (r.op().isMutation()) {
            if (!h.write) {
                return err(tok, Status.READ_ONLY, q);
            }
            if (h.epoch < q.epoch) {
                return err(tok, Status.STALE_EPOCH, q);
            }
        }
        if (r.queueSeq() > 0 && r.op().isMutation()) {
            return applySequenced(tok, q, h, r);
        }
        return applyToQueue(tok, q, h, r);
    }

    /** Sequenced mutations, as the real server's RequestDispatcher: next applied, repeat answered, gap refused. */
    private NodeResponse applySequenced(long tok, SimQueue q, Handle h, NodeRequest r) {
        long qs = r.queueSeq();
        if (qs <= q.seq) {
            repeatsAnswered++;
            NodeResponse first = q.outcomes.get(qs);
            if (first == null) {
                return NodeResponse.of(tok, Status.SEQ_TOO_OLD, q.txn, 0, "outcome no longer kept");
            }
            return NodeResponse.of(tok, first.status(), first.txn(), first.value(), first.reason());
        }
        if (qs > q.seq + 1) {
            return NodeResponse.of(tok, Status.SEQ_GAP, q.txn, q.seq, "seq " + qs + " where the next is " + (q.seq + 1));
        }
        NodeResponse res = applyToQueue(tok, q, h, r);
        Status st = res.status();
        if (st == Status.NOT_FOUND || st == Status.DUPLICATE_ID || st == Status.QUEUE_FULL || st == Status.BAD_REQUEST) {
            q.seq++;
            q.digest = SimQueue.mix(q.digest ^ q.seq * 31 + st.code());
        } else if (st != Status.OK) {
            return res; // the seq is not taken
        }
        q.outcomes.put(qs, NodeResponse.of(tok, st, res.txn(), res.value(), res.reason()));
        return res;
    }

    /** A PUT's record (PUT_REPLACING's, the old version gone): the message appended at the tail, answered with its position. */
    private static NodeResponse append(long tok, SimQueue q, String key, NodeRequest r) {
        Msg m = new Msg(q.positionOfPut(r.position()), r.id(), r.priority(), r.notBefore(), r.state(), r.body());
        q.byPos.put(m.position, m);
        q.byId.put(key, m);
        q.txn++;
        q.applied(2, r.id(), r.priority(), r.notBefore(), r.state(), r.body());
        return NodeResponse.of(tok, Status.OK, q.txn, m.position, null);
    }

    private NodeResponse applyToQueue(long tok, SimQueue q, Handle h, NodeRequest r) {
        String key = r.id() == null ? null : Ids.key(r.id());
        switch (r.op()) {
            case PUT -> {
                if (q.byId.containsKey(key)) {
                    duplicatesAnswered++;
                    return err(tok, Status.DUPLICATE_ID, q);
                }
                return append(tok, q, key, r);
            }
            case PUT_REPLACING -> {
                // One record: the old version (if any) goes, the new one is appended at the tail.
                Msg old = q.byId.remove(key);
                if (old != null) {
                    q.byPos.remove(old.position);
                }
                return append(tok, q, key, r);
            }
            case DELETE -> {
                Msg m = q.byId.remove(key);
                if (m == null) {
                    return err(tok, Status.NOT_FOUND, q);
                }
                q.byPos.remove(m.position);
                q.txn++;
                q.applied(3, r.id(), 0, 0, null, null);
                return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
            }
            case REPLACE -> {
                Msg m = q.byId.get(key);
                if (m == null) {
                    return err(tok, Status.NOT_FOUND, q);
                }
                m.priority = r.priority();
                m.notBefore = r.notBefore();
                m.state = r.state();
                q.txn++;
                q.applied(4, r.id(), r.priority(), r.notBefore(), r.state(), null);
                return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
            }
            case CLEAR -> {
                q.byId.clear();
                q.byPos.clear();
                q.damaged = false;
                q.txn++;
                q.applied(5, null, 0, 0, null, null);
                return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
            }
            case COMMIT -> {
                // The commit point only limits read handles, which the model has no reader for.
                if (!h.write) {
                    return err(tok, Status.READ_ONLY, q);
                }
                if (h.epoch < q.epoch) {
                    return err(tok, Status.STALE_EPOCH, q);
                }
                return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
            }
            case ALIGN -> {
                if (!h.write) {
                    return err(tok, Status.READ_ONLY, q);
                }
                if (h.epoch < q.epoch) {
                    return err(tok, Status.STALE_EPOCH, q);
                }
                if (q.seq == r.fromPosition() && q.digest == r.readyBefore()) {
                    return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
                }
                if (q.seq != r.fromPosition() || q.digest != r.position()) {
                    return err(tok, Status.NOT_FOUND, q);
                }
                q.digest = r.readyBefore(); // as the real store: only the digest changes
                return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
            }
            case REBASE -> {
                if (!h.write) {
                    return err(tok, Status.READ_ONLY, q);
                }
                if (h.epoch < q.epoch) {
                    return err(tok, Status.STALE_EPOCH, q);
                }
                q.seq = r.fromPosition();
                q.digest = r.readyBefore();
                if (r.position() > 0) {
                    q.nextPos = r.position(); // as the real store: the source's next position
                }
                return NodeResponse.of(tok, Status.OK, q.txn, 0, null);
            }
            case GET -> {
                Msg m = q.byId.get(key);
                if (m == null) {
                    return new NodeResponse(tok, Status.NOT_FOUND, q.txn, 0, "not found", 0, 0,
                            new GetResult(Status.NOT_FOUND, "not found", q.txn, null), null, null);
                }
                return new NodeResponse(tok, Status.OK, q.txn, 0, null, 0, 0, new GetResult(Status.OK, null, q.txn, m.stored()),
                        null, null);
            }
            case READ, READ_UNCOMMITTED -> { // the model has no commit point
                List<StoredMessage> out = new ArrayList<>();
                long next = r.fromPosition();
                long bytes = 0;
                for (Msg m : q.byPos.tailMap(r.fromPosition(), true).values()) {
                    next = m.position + 1;
                    if (r.readyBefore() != 0 && m.notBefore > r.readyBefore()) {
                        continue;
                    }
                    out.add(m.stored());
                    bytes += m.body.length;
                    if (out.size() >= r.maxCount() || bytes > r.maxBytes()) {
                        break;
                    }
                }
                if (out.isEmpty()) {
                    next = Math.max(r.fromPosition(), q.nextPos);
                }
                return new NodeResponse(tok, Status.OK, q.txn, 0, null, 0, 0, null,
                        new ReadResult(Status.OK, null, q.txn, next, out), null);
            }
            case STAT -> {
                long bytes = 0;
                long earliest = Long.MAX_VALUE;
                for (Msg m : q.byPos.values()) {
                    bytes += m.body.length;
                    earliest = Math.min(earliest, m.notBefore);
                }
                long first = q.byPos.isEmpty() ? q.nextPos : q.byPos.firstKey();
                return new NodeResponse(tok, Status.OK, q.txn, 0, null, 0, 0, null, null,
                        new QueueStat(Status.OK, null, q.txn, q.byPos.size(), bytes, first, q.nextPos, earliest, q.epoch,
                                q.owner, flags(q), q.seq, q.digest, storeId()));
            }
            default -> throw new IllegalStateException(r.op().toString());
        }
    }

    private NodeResponse open(long conn, NodeRequest r) {
        if (r.expectedStore() != 0 && r.expectedStore() != storeId()) {
            return NodeResponse.of(r.token(), Status.STORE_CHANGED, 0, 0, "store changed");
        }
        SimQueue q = queues.get(r.queue());
        boolean write = r.op() == NodeOp.OPEN_WRITE;
        if (q == null) {
            if (!write) {
                return NodeResponse.of(r.token(), Status.NO_SUCH_QUEUE, 0, 0, "no such queue");
            }
            q = new SimQueue(r.queue());
            queues.put(r.queue(), q);
        }
        if (write) {
            if (r.epoch() < q.epoch) {
                return err(r.token(), Status.STALE_EPOCH, q);
            }
            Long holder = writers.get(q.name);
            if (holder != null && !liveConnections.contains(holder)) {
                holder = null;
            }
            if (r.epoch() == q.epoch && holder != null && holder != conn) {
                return err(r.token(), Status.QUEUE_LOCKED, q);
            }
            if (r.epoch() > q.epoch || !r.owner().equals(q.owner)) {
                // Journaled by the real server (QueueStore.setOwner): a transaction like any mutation.
                q.epoch = r.epoch();
                q.owner = r.owner();
                q.txn++;
            }
            writers.put(q.name, conn);
        }
        int handle = nextHandle++;
        handles.computeIfAbsent(conn, c -> new HashMap<>()).put(handle, new Handle(q, write, r.epoch()));
        return new NodeResponse(r.token(), Status.OK, q.txn, handle, null, q.epoch, q.byPos.size(), null, null, null,
                flags(q), q.seq, q.digest, storeId());
    }

    /** Distinct per node and per data loss, the same in every replay. */
    private long storeId() {
        return (long) (name.hashCode() & 0x7fffffff) << 20 | (store + 1);
    }

    private static int flags(SimQueue q) {
        return q.damaged ? QueueFlags.DAMAGED : 0;
    }

    private static NodeResponse err(long token, Status s, SimQueue q) {
        return NodeResponse.of(token, s, q.txn, 0, s.description());
    }
}
