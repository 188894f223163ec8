package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The state machine of one replicated queue (paper III.D). Single-threaded, no blocking: it reacts
 * to client calls, node answers ({@link Answers#onAnswer}), heartbeat verdicts and clock ticks, and emits
 * requests through {@link ReplicationCore#send}.
 *
 * <h2>Rules</h2>
 * <ul>
 * <li>A mutation goes to both write members (SYNC, or REBUILDING while a copy is rebuilt) and is
 * acknowledged only when both answered OK: an ack always means two copies. With fewer than two
 * write members it fails at once ({@link #NOT_REPLICATED}).</li>
 * <li>Each answered mutation must move the copy's transaction number by exactly one (zero when
 * refused); a disagreement marks the copy NG: it is isolated and rebuilt from the other. A read
 * answered at a number below the copy's own (it lost writes behind an open handle: a server back
 * without its journal, whose connection re-opened the handle by itself) does too, and goes to the
 * other copy.</li>
 * <li>A request unanswered on a member's path (the copy silent for {@code requestTimeout} since it
 * was sent: a copy that keeps answering is not silent), or a path the heartbeat
 * declared NG, switches the member to its other path: a new OPEN (higher generation, which fences
 * whatever is still in flight on the old path), then every unanswered request again, in order. A
 * retried PUT answering DUPLICATE_ID, or a retried DELETE answering NOT_FOUND, was applied the first
 * time: success. The OPEN answer carries the copy's exact transaction number, so the accounting
 * stays exact across the switch; the write OPEN itself is one transaction (the server journals the
 * new epoch), and an OPEN abandoned unanswered may have been applied too.</li>
 * <li>Both paths NG: the member is isolated and a replacement (the next healthy node of the group)
 * is rebuilt from the survivor (see {@link Rebuild}). Mutations the survivor applied but the lost
 * copy never answered are acknowledged when that rebuild completes (they are then on two copies),
 * or fail as "outcome unknown" if no rebuild starts within 5 x {@code requestTimeout} or the
 * rebuild stops making progress for that long (a big queue may take longer to copy: they wait).</li>
 * <li>A STALE_EPOCH anywhere means another owner took the queue: the replica is fenced and every
 * later call fails with STALE_EPOCH.</li>
 * </ul>
 *
 * <h2>Positions</h2>
 * Reads (GET, READ, STAT) go to one SYNC copy, the same one as long as it stays SYNC, and the PUT
 * ack carries that copy's position. A PUT's position is its seq, the same on both sequenced copies,
 * and a rebuild copies the source's positions ({@link Rebuild}): when the read copy changes (its
 * node was lost; the same node's copy isolated and rebuilt) between copies that both number so
 * ({@link Member#sharesPositions()}), a reader's cursor stays valid and the position space is kept.
 * It changes (a reader rescans from position 0) when one of them does not (unsequenced, or its seqs
 * diverged after a SEQ_GAP or a re-base), and at a reclaim (the copies found again may have lost a
 * suffix the reader saw). Every READ result says which space it is in
 * ({@link org.jameskvs.client.ReadResult#positionSpace()}, the value of {@link #readCopyChanges()}
 * when it was sent).
 * <h2>Parts</h2>
 * The replica holds the queue's state; its parts, package-private and stateless, hold the
 * transitions of one concern each: {@link Answers} (node answers, the calls' outcomes),
 * {@link MemberPaths} (members' paths and liveness, isolation), {@link Timers} (timeouts, parked
 * mutations, lease renewal, undos), {@link RecordAndRebuild} (the membership record, a rebuild's start
 * and end), {@link CatchUp} (a copy that comes back: caught up by its suffix, or rebuilt in full),
 * {@link Sending} (a request onto a member's wire, with its seq) and {@link NodeEvents} (the
 * heartbeat's verdicts on a node); one part keeps state of its own, {@link ReadCopy} (the copy
 * serving reads and its position space). The management table's rows: {@link ManagementTable#rowsOf}.
 * <h2>Commit point (the writer's reads)</h2>
 * READ and GET never show a message whose PUT is not acknowledged (in flight: READ stops before
 * it) or failed (left out for good): {@link UncommittedPuts}. A failed PUT that may be on a copy is
 * undone there ({@link Timers#undoFailedPuts}, a DELETE sent on the tick once the queue can write), so
 * that a later writer does not find it either. The commit point also goes to the servers, for
 * read-only readers: {@link CommitPoint}.
 */
public final class QueueReplica {
    /** Status of a mutation refused because fewer than two copies can take it. */
    public static final Status NOT_REPLICATED = Status.STORAGE_ERROR;

    enum Phase { OPENING, READY, FENCED, CLOSED }

    final ReplicationCore core;
    final String name;
    final String owner;
    long epoch;
    /** Generation of the last OPEN sent at {@link #epoch} (see {@link Epochs}): never wraps. */
    long gen;
    /** The generations of {@link #epoch} are used up: the next tick reclaims the queue at a new counter. */
    boolean generationsUsedUp;
    Phase phase = Phase.OPENING;
    final List<Member> members = new ArrayList<>();
    /** Nodes whose copy was isolated (sync NG), for the management table. */
    final Set<String> isolated = new HashSet<>();
    /** Isolated copies whose stale content is cleared once two copies are in sync again. */
    final StaleCopies staleCopies = new StaleCopies(this);
    long recordSeq;
    /** The queue's creation id, carried by every record written (see {@link MembershipRecord}); set by the open. */
    long incarnation;
    /**
     * The store each node of the group answered with, as last heard (an open's fence, a member's
     * OPEN): the witnesses of the records written from here on ({@link MembershipRecord}). An entry
     * that is out of date (the node lost its disk since) only makes later opens more careful.
     */
    final java.util.TreeMap<String, Long> stores = new java.util.TreeMap<>();
    /**
     * Nodes that were down when this open created the queue: they hold no trace of it (the empty
     * fenced queue every open leaves), which is what lets a later open with nodes down tell an
     * existing queue from a new one. Each gets its trace when it comes back (see {@link NodeEvents#onNodeUp}).
     */
    final Set<String> untraced = new HashSet<>();
    /**
     * Nodes of the group the last open did not fence (down then): one may hold a whole copy of an
     * earlier membership, so a rebuild onto it checks its source's store first, as onto an isolated
     * copy ({@code RecordAndRebuild#sourceChecked}). Set by each open, a node leaves it when a rebuild
     * starts onto it.
     */
    final Set<String> unfencedAtOpen = new HashSet<>();
    long renewals;
    long lastRenewAt;
    Rebuild rebuild;
    /** The copy that serves reads, and its position space. */
    final ReadCopy readCopy = new ReadCopy();
    String lastEvent = "";
    /**
     * While a reclaim keeps failing (it is retried on every tick): the last failure said, when, and
     * the attempts since. The same failure is said again only after {@link #REPEAT_NANOS}, with the
     * count: a node down for an hour must not write ten lines a second per queue.
     */
    String reclaimFailure;
    private long reclaimFailureSaidAt;
    private long reclaimAttemptsUnsaid;
    private static final long REPEAT_NANOS = 60_000_000_000L;
    /**
     * A reclaim that keeps failing is tried again after a pause that doubles from one tick up to
     * {@link #RECLAIM_PAUSE_MAX_NANOS}: every attempt fences the nodes heard (a journaled OPEN on
     * each) and uses up an epoch counter, which at one attempt per tick would run out in weeks.
     */
    long nextReclaimAt;
    private long reclaimPause;
    private static final long RECLAIM_PAUSE_MAX_NANOS = 2_000_000_000L;
    OpenProcedure opening;
    /** The open's first record write, until it settled (see {@link #recordSettled}). */
    ReplicaOp openRecordOp;
    private CompletableFuture<OpenResult> openFuture;
    private long openSize;
    boolean noTargetReported;
    /** The writer's commit point for its own reads: PUTs not on two copies are not shown. */
    final UncommittedPuts uncommitted = new UncommittedPuts();
    /** Mutations on one copy, waiting for a rebuild to put them on a second one before their ack. */
    final List<ReplicaOp> parked = new ArrayList<>();

    /** The parts that hold the transitions of one concern each (see "Parts" above); the state stays here. */
    final Answers answers = new Answers(this);
    final MemberPaths paths = new MemberPaths(this);
    final Timers timers = new Timers(this);
    final RecordAndRebuild records = new RecordAndRebuild(this);
    final CommitPoint commitPoint = new CommitPoint(this);
    final CatchUp catchUp = new CatchUp(this);
    final Sending sending = new Sending(this);
    final NodeEvents nodeEvents = new NodeEvents(this);
    /** Mutations since a copy left, for its catch-up when it comes back ({@link CatchUp}); null: none kept. */
    SeqLog seqLog;
    /**
     * A copy refused a PUT for its full store that the other copy took ({@code Answers}): their digests
     * differ from there on, though their content is equal once the PUT is undone; {@link CatchUp#alignIfQuiet}
     * aligns them. {@code alignOp}: the alignment in flight, to {@code alignTarget}.
     */
    boolean digestsApart;
    ReplicaOp alignOp;
    Member alignTarget;

    QueueReplica(ReplicationCore core, String name, String owner) {
        this.core = core;
        this.name = name;
        this.owner = owner;
    }

    public String name() {
        return name;
    }

    public long epoch() {
        return epoch;
    }

    public boolean isFenced() {
        return phase == Phase.FENCED;
    }

    public int readCopyChanges() {
        return readCopy.changes();
    }

    /** Nodes currently holding a SYNC copy (reachable or not). */
    public List<String> syncNodes() {
        return members.stream().filter(m -> m.sync == SyncState.SYNC).map(m -> m.node).toList();
    }

    public List<String> memberNodes() {
        return members.stream().map(m -> m.node).toList();
    }

    public boolean isRebuilding() {
        return rebuild != null;
    }

    // ------------------------------------------------------------------ opening

    void open(OpenOptions options, boolean force, CompletableFuture<OpenResult> future) {
        this.openFuture = future;
        this.opening = new OpenProcedure(this, options, force);
        opening.start();
    }

    /** Called by the open procedure once the queue's members are fenced and known. */
    void opened(long epoch, List<Member> initial, String rebuildTarget, long size) {
        reclaimFailure = null;
        reclaimAttemptsUnsaid = 0;
        reclaimPause = 0;
        nextReclaimAt = 0;
        this.epoch = epoch;
        this.opening = null;
        this.phase = Phase.READY;
        this.openSize = size;
        members.clear();
        members.addAll(initial);
        catchUp.forget(); // a log is this writer's view of copies it saw leave: not carried over an open
        staleCopies.forgetAll(); // the copies were found again by their records
        readCopy.opened(initial.get(0));
        if (uncommitted.undosPending() > 0) {
            // A reclaim: the copies hold failed PUTs still to undo, at seqs not known here. Their
            // commit point is unknown until the undos are through (see CommitPoint.advance).
            for (Member m : initial) {
                m.committed = -1;
            }
        }
        lastRenewAt = core.clock.nanoTime();
        if (members.size() < 2) {
            records.startRebuildIfPossible(rebuildTarget);
        }
        if (rebuild == null) {
            openRecordOp = records.writeRecord();
        } else {
            openRecordOp = rebuild.recordOp;
        }
        if (openRecordOp == null) {
            failOpen(NOT_REPLICATED, "no second node can take a copy");
        }
        event("opened at epoch " + epoch + " members " + members);
    }

    void failOpen(Status status, String reason) {
        if (openFuture == null && (status == Status.TIMEOUT || status == NOT_REPLICATED)) {
            // A reclaim of our own queue: stay usable-but-refusing and try again on the next tick.
            String what = status + " " + reason;
            long now = core.clock.nanoTime();
            if (!what.equals(reclaimFailure) || now - reclaimFailureSaidAt >= REPEAT_NANOS) {
                event("open failed: " + what + (reclaimAttemptsUnsaid > 0
                        ? " (" + reclaimAttemptsUnsaid + " more attempts failed the same way since the last such line)" : ""));
                reclaimFailure = what;
                reclaimFailureSaidAt = now;
                reclaimAttemptsUnsaid = 0;
            } else {
                reclaimAttemptsUnsaid++;
            }
            reclaimPause = Math.min(RECLAIM_PAUSE_MAX_NANOS, Math.max(core.config.tick().toNanos(), reclaimPause * 2));
            nextReclaimAt = now + reclaimPause;
            opening = null;
            phase = Phase.READY;
            return;
        }
        event("open failed: " + status + " " + reason);
        if (openFuture == null) {
            opening = null;
            fence("reclaim refused: " + status + " " + reason);
            return;
        }
        phase = Phase.CLOSED;
        opening = null;
        for (Member m : members) {
            paths.dropAll(m, status, reason);
        }
        core.forgetReplica(this);
        if (openFuture != null && !openFuture.isDone()) {
            openFuture.complete(new OpenResult(status, reason, null, -1, epoch, 0));
        }
    }

    long wireEpoch() {
        return Epochs.wire(epoch, ++gen);
    }

    /** A new fencing epoch (open, takeover, reclaim): its generations start again from 1. */
    void newFencingEpoch(long fencing) {
        epoch = fencing;
        gen = 0;
        generationsUsedUp = false;
    }

    /** The next OPEN's generation comes after {@code used} (an earlier attempt's OPENs at this fencing epoch). */
    void skipGenerationsTo(long used) {
        gen = Math.max(gen, used);
    }

    /** For tests: as if this many OPENs had been sent at the current fencing epoch. */
    void generationsUsedForTest(long used) {
        gen = used;
    }

    /** The writer's epoch counter (what a reclaim increments). */
    public long epochCounter() {
        return Epochs.counter(epoch);
    }

    // ------------------------------------------------------------------ client calls

    CompletableFuture<Ack> mutate(ReplicaOp op) {
        op.ack = new CompletableFuture<>();
        if (phase == Phase.FENCED) {
            op.ack.complete(Ack.failed(Status.STALE_EPOCH, "queue taken over by a newer epoch"));
            return op.ack;
        }
        if (phase != Phase.READY) {
            op.ack.complete(Ack.failed(Status.BAD_HANDLE, "queue is not open"));
            return op.ack;
        }
        List<Member> targets = writeMembers();
        if (targets.size() < 2) {
            op.ack.complete(Ack.failed(NOT_REPLICATED, "only " + targets.size() + " copy can take writes"));
            return op.ack;
        }
        if (rebuild != null) {
            rebuild.noteClientMutation(op); // an undo too: the copier must not bring the message back
        }
        uncommitted.track(op);
        dispatch(op, targets);
        if (op.kind == NodeOp.CLEAR) {
            // CLEAR removes the record too: put it back right after, in the same order on both copies.
            for (Member m : targets) {
                m.hasRecord = false;
            }
            records.writeRecord();
        }
        return op.ack;
    }

    /** For tests: failed PUTs not undone yet. */
    int undosPending() {
        return uncommitted.undosPending();
    }

    void readOp(ReplicaOp op) {
        if (phase == Phase.FENCED || phase != Phase.READY) {
            answers.failRead(op, phase == Phase.FENCED ? Status.STALE_EPOCH : Status.BAD_HANDLE, "queue not usable");
            return;
        }
        Member m = readCopy.choose(members);
        if (m == null) {
            answers.failRead(op, Status.TIMEOUT, "no in-sync copy reachable");
            return;
        }
        op.positionSpace = readCopy.changes();
        op.await(m);
        sending.sendTo(m, op, false);
    }

    List<Member> writeMembers() {
        List<Member> out = new ArrayList<>(2);
        for (Member m : members) {
            if (m.writable()) {
                out.add(m);
            }
        }
        return out;
    }

    void dispatch(ReplicaOp op, List<Member> targets) {
        for (Member m : targets) {
            op.await(m);
        }
        for (Member m : targets) {
            if (op.kind.isMutation()) {
                m.predictedTxn++;
            }
            sending.sendTo(m, op, false);
        }
    }

    // ------------------------------------------------------------------ the open's first record

    /** The open completes once its first record is on every copy still a member (at least one). */
    void recordSettled(ReplicaOp op) {
        if (op != openRecordOp || op.awaitsAny()) {
            return;
        }
        openRecordOp = null;
        if (op.effective.keySet().stream().anyMatch(members::contains)) {
            completeOpen();
        } else if (openFuture != null && !openFuture.isDone()) {
            failOpen(Status.TIMEOUT, "the ownership record reached no copy");
        }
    }

    private void completeOpen() {
        if (openFuture == null || openFuture.isDone()) {
            return;
        }
        event("open complete: " + members);
        openFuture.complete(new OpenResult(Status.OK, null, null, -1, epoch, openSize));
    }

    // ------------------------------------------------------------------ fencing

    void fence(String why) {
        if (phase == Phase.FENCED) {
            return;
        }
        event("fenced: " + why);
        catchUp.forget();
        boolean wasOpening = phase == Phase.OPENING || openRecordOp != null;
        phase = Phase.FENCED;
        timers.failParked(true, core.clock.nanoTime(), "fenced");
        if (rebuild != null) {
            rebuild.abort("fenced");
            rebuild = null;
        }
        for (Member m : members) {
            paths.dropAll(m, Status.STALE_EPOCH, "queue taken over by a newer epoch");
        }
        if (wasOpening && openFuture != null && !openFuture.isDone()) {
            openFuture.complete(new OpenResult(Status.STALE_EPOCH, why, null, -1, epoch, 0));
        }
    }

    /**
     * Finds the copies again as a restarted owner would (probe, fence with epoch counter + 1,
     * records); what is in flight ends with {@code failWith}.
     */
    void reclaim(Status failWith, String why) {
        timers.failParked(true, core.clock.nanoTime(), why);
        if (rebuild != null) {
            rebuild.abort(why);
            rebuild = null;
        }
        for (Member m : new ArrayList<>(members)) {
            paths.dropAll(m, failWith, why);
        }
        members.clear();
        catchUp.forget();
        phase = Phase.OPENING;
        openFuture = null;
        opening = new OpenProcedure(this, org.jameskvs.client.OpenOptions.writer(owner, Epochs.counter(epoch) + 1), false);
        opening.start();
    }

    // ------------------------------------------------------------------ helpers

    static boolean isMutation(ReplicaOp op) {
        return op.kind.isMutation() || op.purpose == ReplicaOp.Purpose.RECORD;
    }

    /** Two reachable in-sync members and no rebuild: what every isolated copy is superseded by. */
    boolean twoCopiesInSync() {
        return phase == Phase.READY && rebuild == null && members.size() == 2
                && members.stream().allMatch(m -> m.sync == SyncState.SYNC && !m.lost);
    }

    Member memberOn(String node) {
        for (Member m : members) {
            if (m.node.equals(node)) {
                return m;
            }
        }
        return null;
    }

    Member otherMember(Member m) {
        for (Member x : members) {
            if (x != m) {
                return x;
            }
        }
        return null;
    }

    void close() {
        phase = Phase.CLOSED;
        catchUp.forget();
        timers.failParked(true, core.clock.nanoTime(), "closed");
        if (rebuild != null) {
            rebuild.abort("queue closed");
            rebuild = null;
        }
        for (Member m : members) {
            paths.dropAll(m, Status.BAD_HANDLE, "queue closed");
        }
        core.forgetReplica(this);
    }

    void event(String e) {
        lastEvent = e;
        core.log(name, e);
    }

    /** For tests: the node of the copy serving reads (null before the first open). */
    String readCopyNode() {
        return readCopy.current() == null ? null : readCopy.current().node;
    }

    /** For tests: every member's bookkeeping. */
    Map<String, Long> memberTxns() {
        Map<String, Long> out = new HashMap<>();
        for (Member m : members) {
            out.put(m.node, m.txn);
        }
        return out;
    }
}
