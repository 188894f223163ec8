package org.jameskvs.replication;

import org.jameskvs.client.GetResult;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A read-only reader of a replicated queue, for readers of another writer's queue (the OR-set
 * repository reads the other James nodes' logs): no fencing, no ownership, never a mutation.
 * Part of the state machine: single-threaded, driven by client calls, node answers and ticks.
 *
 * <h2>Which copy serves the reads</h2>
 * Not "the first node that has a queue of that name": the writer's open fences every node of the
 * group by opening the queue there for writing, which leaves an empty queue on nodes that are not
 * copies (and a former copy keeps its stale content). The reader reads the replication record of
 * every reachable node ({@link ReplicationCore#peekRecord}) and serves reads from a copy that the
 * newest record names SYNC and that holds a record itself (no record means it lost its data). With
 * no record anywhere (a queue not written through replication, or one whose first record is not
 * written yet) the largest copy serves, but only if every node of the group answered, as for
 * creating a queue; a record is trusted when all but one node answered, as for opening one.
 *
 * <h2>Following the copies</h2>
 * <ul>
 * <li>A request that fails on the serving copy (connection lost, timeout, handle or queue gone, node
 * or path declared NG by the heartbeat) drops that copy; the reader resolves again, preferring
 * another copy, and the request is sent again there (at most {@link #MAX_SENDS} times in all).
 * Requests arriving meanwhile wait for the resolution, which is bounded by {@code requestTimeout}.</li>
 * <li>Every {@code leaseRenew} the records are read again: when the newest one no longer names the
 * serving copy SYNC (it was isolated, is being rebuilt, or the copies moved), the reader switches to
 * a copy it names. In between, a READ block that holds the copy's own record saying it is not SYNC
 * (a rebuild starts with CLEAR and that record) is not handed out: the reader switches at once.</li>
 * <li>Positions are per copy: every READ result carries the position space of the copy that
 * answered ({@link ReadResult#positionSpace()}), a new value after each switch (a switch back to a
 * node whose copy failed counts as a switch too, its copy may have been rebuilt meanwhile). A
 * reader must then rescan from position 0.</li>
 * <li>A copy its server flags DAMAGED (journal records of it lost at recovery: it may lack
 * acknowledged messages or hold deleted ones) is read only when no intact copy qualifies, and then
 * with an ALARM event naming it; the next check of the records moves to an intact copy as soon as
 * one qualifies (the writer's rebuild ends the mark).</li>
 * </ul>
 * The replication's own record (reserved ids) is hidden from READ, GET and STAT.
 */
public final class ReadOnlyReplica {
    /** Sends of one request (first try and retries on another copy). */
    static final int MAX_SENDS = 3;

    private final ReplicationCore core;
    final String name;
    private ReplicationCore.Holder serving;
    private int positionSpace;
    private boolean everServed;
    private boolean resolving;
    /** The serving copy failed: the next resolution is a switch (new position space) whatever it picks. */
    private boolean mustMove;
    /** The node whose copy failed last: chosen again only when no other copy qualifies. */
    private String avoid;
    private long lastResolvedAt;
    private boolean closed;
    private CompletableFuture<OpenResult> openFuture;
    private final List<Op> waiting = new ArrayList<>();
    private final List<Op> inflight = new ArrayList<>();

    /** One client call; STAT takes two requests (the STAT, then the record's GET to hide it). */
    private static final class Op {
        final NodeOp kind;
        byte[] id;
        long from;
        int maxCount;
        int maxBytes;
        long readyBefore;
        CompletableFuture<ReadResult> read;
        CompletableFuture<GetResult> get;
        CompletableFuture<QueueStat> stat;
        QueueStat statAnswer;
        int sends;
        long token;
        long sentAt;
        String node;
        int space;
        Status lastStatus = Status.TIMEOUT;
        String lastReason = "no copy answered";

        Op(NodeOp kind) {
            this.kind = kind;
        }
    }

    ReadOnlyReplica(ReplicationCore core, String name) {
        this.core = core;
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** The position space of the copy serving reads now (changes at every switch). */
    public int positionSpace() {
        return positionSpace;
    }

    /** The node whose copy serves reads now; null while none is chosen. */
    public String servingNode() {
        return serving == null ? null : serving.node();
    }

    // ------------------------------------------------------------------ client calls

    CompletableFuture<OpenResult> open() {
        openFuture = new CompletableFuture<>();
        resolve();
        return openFuture;
    }

    CompletableFuture<ReadResult> read(long from, int maxCount, int maxBytes, long readyBefore) {
        return read(NodeOp.READ, from, maxCount, maxBytes, readyBefore);
    }

    /**
     * READ past the queue's commit point: every message the serving copy holds, also those whose
     * writer had not yet declared them on both copies (an operator's export when no writer is left:
     * the last acknowledged mails may be beyond the commit point the servers know). It may show a
     * put that failed on the other copy: a duplicate, never a loss.
     */
    CompletableFuture<ReadResult> readUncommitted(long from, int maxCount, int maxBytes, long readyBefore) {
        return read(NodeOp.READ_UNCOMMITTED, from, maxCount, maxBytes, readyBefore);
    }

    private CompletableFuture<ReadResult> read(NodeOp kind, long from, int maxCount, int maxBytes, long readyBefore) {
        Op op = new Op(kind);
        op.from = from;
        op.maxCount = maxCount;
        op.maxBytes = maxBytes;
        op.readyBefore = readyBefore;
        op.read = new CompletableFuture<>();
        submit(op);
        return op.read;
    }

    CompletableFuture<GetResult> get(byte[] id) {
        if (Ids.isReserved(id)) {
            return CompletableFuture.completedFuture(new GetResult(Status.NOT_FOUND, "reserved id", 0, null));
        }
        Op op = new Op(NodeOp.GET);
        op.id = id;
        op.get = new CompletableFuture<>();
        submit(op);
        return op.get;
    }

    CompletableFuture<QueueStat> stat() {
        Op op = new Op(NodeOp.STAT);
        op.stat = new CompletableFuture<>();
        submit(op);
        return op.stat;
    }

    void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<Op> all = new ArrayList<>(inflight);
        all.addAll(waiting);
        inflight.clear();
        waiting.clear();
        for (Op op : all) {
            core.forget(op.token);
            fail(op, Status.BAD_HANDLE, "queue closed");
        }
        if (openFuture != null && !openFuture.isDone()) {
            openFuture.complete(new OpenResult(Status.BAD_HANDLE, "closed while opening", null, -1, 0, 0));
        }
        core.forgetReader(this);
    }

    private void submit(Op op) {
        if (closed) {
            fail(op, Status.BAD_HANDLE, "queue closed");
            return;
        }
        if (serving == null) {
            waiting.add(op);
            if (!resolving) {
                resolve();
            }
            return;
        }
        send(op);
    }

    // ------------------------------------------------------------------ requests

    private void send(Op op) {
        if (op.kind == NodeOp.STAT && op.statAnswer != null && !serving.node().equals(op.node)) {
            op.statAnswer = null; // both halves must come from one copy
        }
        op.sends++;
        op.node = serving.node();
        op.space = positionSpace;
        NodeOp kind = op.kind == NodeOp.STAT && op.statAnswer != null ? NodeOp.GET : op.kind;
        byte[] id = kind == NodeOp.GET && op.kind == NodeOp.STAT ? Ids.RECORD_ID : op.id;
        NodeRequest r = new NodeRequest(core.nextToken(), serving.node(), serving.path(), name, kind, id, 0, 0, null,
                null, op.from, op.maxCount, op.maxBytes, op.readyBefore, 0, null, true);
        op.token = r.token();
        op.sentAt = core.clock.nanoTime();
        inflight.add(op);
        core.send(r, resp -> onAnswer(op, r.token(), resp));
    }

    private void onAnswer(Op op, long token, NodeResponse r) {
        if (op.token != token || !inflight.remove(op)) {
            return; // timed out meanwhile (and sent again, or failed)
        }
        if (copyFailed(r.status())) {
            failed(op, r.status(), r.reason());
            return;
        }
        switch (op.kind) {
            case READ, READ_UNCOMMITTED -> {
                ReadResult rr = r.read();
                if (rr == null) {
                    rr = new ReadResult(r.status(), r.reason(), r.txn(), op.from, List.of());
                } else if (rr.messages().stream().anyMatch(m -> Ids.isReserved(m.id()))) {
                    String notInSync = notInSync(rr, op.node);
                    if (notInSync != null) {
                        // Cleared and being rebuilt (or otherwise out of sync) since the last check:
                        // its content may be partial. Read another copy.
                        failed(op, Status.TIMEOUT, notInSync);
                        return;
                    }
                    List<StoredMessage> visible = rr.messages().stream().filter(m -> !Ids.isReserved(m.id())).toList();
                    rr = new ReadResult(rr.status(), rr.reason(), rr.txn(), rr.nextPosition(), visible);
                }
                op.read.complete(rr.inPositionSpace(op.space));
            }
            case GET -> op.get.complete(r.get() != null ? r.get() : new GetResult(r.status(), r.reason(), r.txn(), null));
            case STAT -> {
                if (op.statAnswer == null) {
                    QueueStat st = r.stat();
                    if (st == null || !st.isOk()) {
                        op.stat.complete(st != null ? st
                                : new QueueStat(r.status(), r.reason(), r.txn(), 0, 0, 0, 0, Long.MAX_VALUE, 0, ""));
                        return;
                    }
                    op.statAnswer = st;
                    op.sends--; // the second half of the same call, not a retry
                    submit(op); // the record's GET, on the same copy (else the STAT again)
                    return;
                }
                QueueStat st = op.statAnswer;
                boolean hasRecord = r.isOk() && r.get() != null && r.get().message() != null;
                op.stat.complete(!hasRecord ? st : new QueueStat(st.status(), st.reason(), st.txn(),
                        Math.max(0, st.size() - 1), st.bytes(), st.firstPosition(), st.nextPosition(),
                        st.earliestNotBefore(), st.epoch(), st.owner()));
            }
            default -> throw new IllegalStateException(op.kind.toString());
        }
    }

    /**
     * The copy's own record, when a block holds it (it is rewritten in place, and put again first
     * after the CLEAR that starts a rebuild): a reason when it says this copy is not SYNC, else null.
     */
    private static String notInSync(ReadResult rr, String node) {
        for (StoredMessage m : rr.messages()) {
            if (Ids.isReserved(m.id())) {
                MembershipRecord rec = MembershipRecord.decode(m.state());
                MembershipRecord.Entry e = rec == null ? null : rec.entry(node);
                if (rec != null && (e == null || e.sync() != SyncState.SYNC)) {
                    return "its record " + rec.epoch() + "." + rec.seq() + " says " + (e == null ? "not a member" : e.sync());
                }
            }
        }
        return null;
    }

    /** Answers that say the copy cannot serve (as opposed to an answer about the request itself). */
    private static boolean copyFailed(Status s) {
        return s != Status.OK && s != Status.NOT_FOUND && s != Status.BAD_REQUEST && s != Status.FRAME_TOO_LARGE;
    }

    /** The request failed on its copy: drop that copy, and send the request again elsewhere (bounded). */
    private void failed(Op op, Status status, String reason) {
        op.lastStatus = status;
        op.lastReason = op.node + ": " + reason;
        dropServing(op.node, status + " " + reason);
        if (op.sends >= MAX_SENDS || closed) {
            fail(op, op.lastStatus, op.lastReason);
            return;
        }
        if (op.kind == NodeOp.STAT) {
            op.statAnswer = null; // both halves must come from one copy
        }
        submit(op);
    }

    private void dropServing(String node, String why) {
        if (serving == null || !serving.node().equals(node)) {
            return; // already switched away from it
        }
        core.log(name, "read-only: copy on " + node + " failed (" + why + "): switching");
        serving = null;
        mustMove = true;
        avoid = node;
        if (!resolving && !closed) {
            resolve();
        }
    }

    private void fail(Op op, Status st, String reason) {
        if (op.read != null) {
            op.read.complete(new ReadResult(st, reason, -1, op.from, List.of()));
        } else if (op.get != null) {
            op.get.complete(new GetResult(st, reason, -1, null));
        } else if (op.stat != null) {
            op.stat.complete(new QueueStat(st, reason, -1, 0, 0, 0, 0, Long.MAX_VALUE, 0, ""));
        }
    }

    // ------------------------------------------------------------------ resolution

    private void resolve() {
        resolving = true;
        core.peekRecord(name).thenAccept(this::resolved);
    }

    private void resolved(ReplicationCore.Peeked p) {
        resolving = false;
        if (closed) {
            return;
        }
        lastResolvedAt = core.clock.nanoTime();
        int groupSize = core.placement.group().size();
        ReplicationCore.Holder choice = choose(p, serving == null ? null : serving.node(), avoid, groupSize);
        if (choice == null && serving != null && !mustMove && !excludes(p, serving.node())) {
            // A background check that found nothing better and nothing against the serving copy.
            return;
        }
        if (choice == null) {
            String why = why(p, groupSize);
            if (serving != null) {
                core.log(name, "read-only: " + serving.node() + " is no longer an in-sync copy; " + why);
                serving = null;
                mustMove = true;
            }
            List<Op> all = new ArrayList<>(waiting);
            waiting.clear();
            Status st = p.answered() == 0 ? Status.CONNECTION_LOST
                    : p.holders().isEmpty() && p.answered() >= groupSize - 1 ? Status.NO_SUCH_QUEUE : Status.TIMEOUT;
            for (Op op : all) {
                fail(op, op.sends > 0 ? op.lastStatus : st, op.sends > 0 ? op.lastReason + "; " + why : why);
            }
            if (openFuture != null && !openFuture.isDone()) {
                openFuture.complete(new OpenResult(st, why, null, -1, 0, 0));
                closed = true;
                core.forgetReader(this);
            }
            return;
        }
        boolean moved = serving == null || mustMove || !serving.node().equals(choice.node());
        if (moved && choice.damaged()) {
            core.log(name, "ALARM read-only: reading the DAMAGED copy on " + choice.node() + ", no intact copy"
                    + " qualifies: it may lack acknowledged messages or hold deleted ones");
        }
        if (moved) {
            if (everServed) {
                positionSpace++;
                core.log(name, "read-only: reads now from " + choice.node() + " (position space " + positionSpace
                        + ", record " + (p.record() == null ? "none" : p.record().epoch() + "." + p.record().seq()) + ")");
            }
        }
        serving = choice;
        everServed = true;
        mustMove = false;
        avoid = null;
        if (openFuture != null && !openFuture.isDone()) {
            openFuture.complete(new OpenResult(Status.OK, null, null, choice.txn(), choice.epoch(),
                    Math.max(0, choice.size() - (choice.record() != null ? 1 : 0))));
        }
        List<Op> all = new ArrayList<>(waiting);
        waiting.clear();
        for (Op op : all) {
            send(op);
        }
    }

    /**
     * Whether the records say that {@code node} holds no in-sync copy (any more): the newest one
     * heard, counting the node's own (so it is at least as new as what the node holds), omits it.
     */
    private static boolean excludes(ReplicationCore.Peeked p, String node) {
        MembershipRecord rec = p.record();
        if (rec == null || p.holders().stream().noneMatch(h -> h.node().equals(node))) {
            return false;
        }
        MembershipRecord.Entry e = rec.entry(node);
        return e == null || e.sync() != SyncState.SYNC;
    }

    /**
     * The copy to read from: one the newest record names SYNC and that holds a record itself, an
     * intact one before a DAMAGED one, then the avoided node last, the current one first, then a
     * node holding the newest version; with no record anywhere, the largest copy (intact first).
     * Null when nothing qualifies or too few nodes answered to tell.
     */
    static ReplicationCore.Holder choose(ReplicationCore.Peeked p, String current, String avoid, int groupSize) {
        MembershipRecord rec = p.record();
        List<ReplicationCore.Holder> candidates = new ArrayList<>();
        if (rec != null) {
            if (p.answered() < groupSize - 1) {
                return null; // the newest record may be on the silent nodes
            }
            for (MembershipRecord.Entry e : rec.members()) {
                for (ReplicationCore.Holder h : p.holders()) {
                    if (e.sync() == SyncState.SYNC && h.node().equals(e.node()) && h.record() != null) {
                        candidates.add(h);
                    }
                }
            }
        } else {
            if (p.answered() < groupSize) {
                return null; // no record heard: only every node can tell which copy is the queue
            }
            candidates.addAll(p.holders());
            candidates.sort(Comparator.comparingLong(ReplicationCore.Holder::size).reversed());
        }
        candidates.sort(Comparator.comparingInt((ReplicationCore.Holder h) -> h.damaged() ? 1 : 0)
                .thenComparingInt(h -> h.node().equals(avoid) ? 1 : 0)
                .thenComparingInt(h -> h.node().equals(current) ? 0 : 1)
                .thenComparingInt(h -> rec != null && sameVersion(h.record(), rec) ? 0 : 1));
        return candidates.isEmpty() ? null : candidates.get(0);
    }

    private static boolean sameVersion(MembershipRecord a, MembershipRecord b) {
        return a != null && b != null && a.epoch() == b.epoch() && a.seq() == b.seq();
    }

    private static String why(ReplicationCore.Peeked p, int groupSize) {
        if (p.answered() == 0) {
            return "no node of the group answered";
        }
        if (p.record() == null && p.holders().isEmpty()) {
            return "no copy of the queue on the " + p.answered() + " of " + groupSize + " nodes that answered";
        }
        if (p.record() == null) {
            return "no replication record on the " + p.answered() + " of " + groupSize
                    + " nodes that answered; a copy is chosen without one only when every node answers";
        }
        if (p.answered() < groupSize - 1) {
            return "only " + p.answered() + " of " + groupSize + " nodes answered; " + (groupSize - 1) + " are needed";
        }
        return "no in-sync copy reachable; members " + p.record().members();
    }

    // ------------------------------------------------------------------ driving

    void tick(long now) {
        if (closed) {
            return;
        }
        long timeout = core.config.requestTimeout().toNanos();
        for (Op op : new ArrayList<>(inflight)) {
            if (now - op.sentAt > timeout && inflight.remove(op)) {
                core.forget(op.token);
                failed(op, Status.TIMEOUT, "no answer within " + core.config.requestTimeout().toMillis() + " ms");
            }
        }
        if (serving != null) {
            NodeHealth h = core.health(serving.node());
            if (h.state(serving.path()) == NetState.NG) {
                dropServing(serving.node(), h.up() ? "its path " + serving.path() + " is NG" : "heartbeat: node down");
            }
        }
        if (!resolving && serving != null && now - lastResolvedAt >= core.config.leaseRenew().toNanos()) {
            resolve(); // the copies may have moved: read the records again
        }
    }
}
