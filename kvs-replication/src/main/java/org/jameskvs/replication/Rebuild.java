package org.jameskvs.replication;

import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Re-synchronisation of a copy (paper III.D "delete all data in this backup queue and
 * re-synchronize", IV.D block-wise recovery), while client traffic goes on.
 *
 * <p>The target is opened, CLEARed, given the record, and from that moment takes every new
 * mutation together with the source (it is a write member: acks still mean two copies). A STAT on
 * the source, sent in the source's request stream at that same moment, gives the <i>marker</i>: the
 * source's next position. Everything below the marker is copied in READ blocks of
 * {@code copyBlockMessages}; everything from the marker on reaches the target live. When the last
 * block is copied the target becomes SYNC.
 *
 * <p>Mutations during the copy: a DELETE of a message not yet copied answers NOT_FOUND on the
 * target (counted as success) and its id is remembered, so a block read before the delete does
 * not bring it back. A REPLACE is remembered likewise and its priority, notBefore and state are
 * used when the message is copied later, so no stale state survives. A CLEAR stops the copy. A copy
 * PUT sent before such a mutation reaches the target before it (one ordered connection), so the
 * mutation applies on top of the copy. A replacing PUT (same id) counts as a DELETE for the copy:
 * the target gets the new version live.
 *
 * <p><b>Order.</b> Messages put during the copy reach the target live, between the copied older
 * ones; left so, the rebuilt copy would hand them out before older mail once it serves reads. So
 * the copy goes on in <i>re-append passes</i>: a new marker (STAT on the source) ends a range that
 * starts at the previous one, and every message of that range is put again on the target with a
 * replacing PUT, which moves it to the target's tail, in the source's order (the latest state of a
 * REPLACE noted during the rebuild, skipping ids deleted live). A pass whose range is short (at most
 * one copy block, or the {@link #MAX_PASSES}th) is the last: from its marker on, the target's new
 * mutations are <i>held</i> (their acks wait) and sent right behind the re-appended messages when it
 * ends, and the target becomes SYNC, after a REBASE that gives it the source's last seq and
 * digest at that last marker ({@link #rebaseOp}), so the two compare equal by content.
 *
 * <p><b>Positions.</b> Every copied or re-appended message is put at the source's position
 * ({@code FLAG_POSITIONED}); the target's own PUTs meanwhile (the record, live mutations) are
 * put at positions from {@link #OWN_POSITIONS_FROM} on, far from any of the source's, and the passes move the live ones to their source positions; the final
 * REBASE gives the target the source's next position too. The rebuilt copy then holds the source's
 * messages at the source's positions, so a reader's cursor is valid on it (no rescan) and the next
 * PUTs, sequenced, take the same positions on both copies.
 *
 * <p><b>Catch-up mode</b> ({@link CatchUp}): the target is the copy that left, back on its node with
 * its content. From the start its new mutations are held and the marker is taken; its OPEN answer
 * decides. If its (seq, digest) is one the writer's log holds, it is one held pass over the suffix
 * only: the log's DELETEs and REPLACEs after its seq are replayed, the source's messages at positions
 * after its seq (a PUT's position is its seq) copied at their positions, then the REBASE as above;
 * no CLEAR. Otherwise it turns into the rebuild above: CLEAR, what was held, a first pass from 0.
 */
final class Rebuild {
    final QueueReplica replica;
    final Member source;
    final Member target;
    /**
     * Where the target's own PUTs during the copy go (see {@code Sending.transmit}):
     * far above any position a source reaches (a position is a seq).
     */
    static final long OWN_POSITIONS_FROM = 1L << 62;
    /** Passes beyond this many re-append passes hold anyway (bounds the rebuild under a heavy load). */
    static final int MAX_PASSES = 4;

    ReplicaOp recordOp;
    private long marker = -1;
    private long cursor;
    /** 1: the copy below the first marker; 2 and on: re-append passes (see class doc). */
    private int pass = 1;
    /** A marker is asked for and not answered yet. */
    private boolean awaitingMarker = true;
    /** First position of the current re-append pass's range. */
    private long passStart;
    /**
     * The lowest source position of a first-pass copy that the target already held (DUPLICATE_ID):
     * the message came live, so the first marker was taken after it (its STAT answered late, e.g.
     * resent after a path switch) and the first range holds live messages; the next pass re-appends
     * from here, not from the marker, or they would stay ahead of older mail. Long.MAX_VALUE: none.
     */
    private long firstLiveCopied = Long.MAX_VALUE;
    /** Client mutations noted so far, and that count when the outstanding READ was sent. */
    private long noted;
    private long readMark;
    /** Per id, the count at its last DELETE or replacing PUT (a re-append of an older read must not undo it). */
    private final Map<String, Long> lastRemoval = new HashMap<>();
    private boolean cleared;
    /** The source's last seq and digest at the last marker (-1: not read yet): the target takes them over at the end. */
    private long baseSeq = -1;
    private long baseDigest;
    /** The source's next position at the last marker: the target numbers its next PUT from there too. */
    private long baseNextPosition;
    private boolean reading;
    private int outstanding;
    long copied;
    /**
     * Catch-up mode ({@link CatchUp}): the target is the copy that left, back; -1 until its OPEN
     * answer showed it holds the survivor's content at this seq (then only what follows is sent).
     */
    private long catchUpFrom = -1;
    /** Waiting for the target's OPEN answer to choose between a catch-up and a full copy. */
    private boolean awaitingDecision;
    /** DELETEs and REPLACEs of a catch-up's suffix replayed on the target. */
    long replayed;
    /** The marker's answer when it came before the decision (it is used once the decision is made). */
    private NodeResponse earlyMarker;
    final long startedAt;
    /** When the source or the target last answered a step of the copy (clock of the core). */
    private long progressAt;
    private final Set<String> deleted = new HashSet<>();
    private final Map<String, ReplicaOp> replaced = new HashMap<>();
    /** Acks of REPLACEs of not-yet-copied messages, released when the copy completes. */
    final List<ReplicaOp> deferred = new ArrayList<>();

    Rebuild(QueueReplica replica, Member source, Member target) {
        this.replica = replica;
        this.source = source;
        this.target = target;
        this.startedAt = replica.core.clock.nanoTime();
        this.progressAt = startedAt;
    }

    /** Whether the copy made a step (marker, block, copied message) within {@code limit} of {@code now}. */
    boolean progressedWithin(long now, long limit) {
        return now - progressAt <= limit;
    }

    private void progressed() {
        progressAt = replica.core.clock.nanoTime();
    }

    void start() {
        ReplicaOp stat = new ReplicaOp(NodeOp.STAT, ReplicaOp.Purpose.MARKER, replica.core.clock.nanoTime());
        stat.rebuild = this;
        replica.sending.sendTo(source, stat, false);
    }

    void noteClientMutation(ReplicaOp op) {
        if (target.holding && !awaitingDecision) {
            return; // held for the target: applied there after the re-appended messages, in order
        }
        noted++;
        switch (op.kind) {
            // A replacing PUT reaches the target live with the newest version: the copy must not
            // bring an older one (which the target would then refuse as a duplicate id).
            case DELETE, PUT_REPLACING -> {
                deleted.add(Ids.key(op.id));
                replaced.remove(Ids.key(op.id));
                lastRemoval.put(Ids.key(op.id), noted);
            }
            case REPLACE -> replaced.put(Ids.key(op.id), op);
            case CLEAR -> cleared = true;
            default -> { }
        }
    }

    void onMarker(NodeResponse r) {
        if (!r.isOk() || r.stat() == null) {
            replica.paths.markNg(target, "cannot STAT the rebuild source: " + r.status());
            return;
        }
        progressed();
        if (awaitingDecision) {
            earlyMarker = r;
            return;
        }
        awaitingMarker = false;
        if (target.holding) {
            // From this marker on the target's new mutations are held, so it lacks exactly the
            // source's mutations up to here once the last pass is copied: it takes over this identity.
            baseSeq = r.stat().lastSeq();
            baseDigest = r.stat().digest();
            baseNextPosition = r.stat().nextPosition();
        }
        long end = r.stat().nextPosition();
        if (catchUpFrom >= 0) {
            // A catch-up is one held pass: the target has every message up to its seq (a PUT's
            // position is its seq), so the copy starts right after it, behind the replayed changes.
            cursor = catchUpFrom + 1;
            marker = Math.max(end, cursor);
            if (replaySuffix()) {
                next();
            }
            return;
        }
        cursor = pass == 1 ? 0 : passStart; // a re-append pass covers [previous marker, new marker)
        marker = Math.max(end, cursor);
        next();
    }

    /** The target's OPEN answer is awaited before anything is sent to it (see {@link CatchUp#decide}). */
    void awaitDecision() {
        awaitingDecision = true;
    }

    boolean awaitsDecision() {
        return awaitingDecision;
    }

    boolean caughtUp() {
        return catchUpFrom >= 0;
    }

    /**
     * The target holds the survivor's content at {@code seq}: it gets the suffix only. What was
     * noted meanwhile is held for it and follows the catch-up in order: nothing to skip.
     */
    void catchUpFrom(long seq) {
        awaitingDecision = false;
        catchUpFrom = seq;
        deleted.clear();
        replaced.clear();
        lastRemoval.clear();
        cleared = false;
        markerIfEarly();
    }

    private void markerIfEarly() {
        NodeResponse r = earlyMarker;
        earlyMarker = null;
        if (r != null) {
            onMarker(r);
        }
    }

    /** The target is rebuilt in full after all: CLEAR first, then what was held for it, live. */
    void inFull() {
        awaitingDecision = false;
        ReplicaOp clear = new ReplicaOp(NodeOp.CLEAR, ReplicaOp.Purpose.CLEAR_TARGET, replica.core.clock.nanoTime());
        clear.rebuild = this; // not held: ahead of everything held
        target.predictedTxn++;
        replica.sending.sendTo(target, clear, false);
        target.hasRecord = false;
        replica.paths.releaseHeld(target); // from the marker on (see RecordAndRebuild): live, as a first pass wants
        markerIfEarly();
    }

    /**
     * The changes of the suffix (the log's, up to the marker's seq), sent to the target before its
     * copies: a DELETE (or a replacing PUT: the old version goes, the new one is copied), a
     * REPLACE with its state. A message put in the suffix answers NOT_FOUND (it is copied in its
     * latest state). A log that does not reach the marker, or a CLEAR in it: rebuilt in full.
     */
    private boolean replaySuffix() {
        SeqLog log = replica.seqLog;
        String why = log == null ? "catch-up log given up" : log.lastSeq() < baseSeq
                ? "catch-up log ends at seq " + log.lastSeq() + ", below the source's " + baseSeq : null;
        List<SeqLog.Change> changes = why == null ? log.changesAfter(catchUpFrom, baseSeq) : List.of();
        if (why == null && changes.stream().anyMatch(c -> c.kind() == NodeOp.CLEAR)) {
            why = "a CLEAR in the suffix";
        }
        if (why != null) {
            replica.catchUp.drop(why);
            replica.paths.markNg(target, "catch-up impossible: " + why);
            return false;
        }
        for (SeqLog.Change c : changes) {
            ReplicaOp op = new ReplicaOp(c.kind() == NodeOp.REPLACE ? NodeOp.REPLACE : NodeOp.DELETE, ReplicaOp.Purpose.COPY,
                    replica.core.clock.nanoTime());
            op.rebuild = this;
            op.id = c.id();
            op.priority = c.priority();
            op.notBefore = c.notBefore();
            op.state = c.state();
            target.predictedTxn++;
            outstanding++;
            replica.sending.sendTo(target, op, false);
        }
        return true;
    }

    private void next() {
        if (replica.rebuild != this || reading || outstanding > 0 || awaitingMarker) {
            return;
        }
        if (cleared || (cursor >= marker && target.holding)) {
            replica.records.rebuildDone(this);
            return;
        }
        if (cursor >= marker) {
            nextPass();
            return;
        }
        reading = true;
        readMark = noted;
        ReplicaOp read = new ReplicaOp(NodeOp.READ, ReplicaOp.Purpose.COPY_READ, replica.core.clock.nanoTime());
        read.rebuild = this;
        read.fromPosition = cursor;
        read.maxCount = replica.core.config.copyBlockMessages();
        read.maxBytes = replica.core.config.copyBlockBytes();
        replica.sending.sendTo(source, read, false);
    }

    /** Asks the source for the next marker; the last pass (short range, or the last allowed) holds the target's new mutations. */
    private void nextPass() {
        long range = pass == 1 ? marker : marker - passStart;
        passStart = pass == 1 ? Math.min(marker, firstLiveCopied) : marker;
        pass++;
        if (range <= replica.core.config.copyBlockMessages() || pass >= MAX_PASSES) {
            target.holding = true;
        }
        awaitingMarker = true;
        ReplicaOp stat = new ReplicaOp(NodeOp.STAT, ReplicaOp.Purpose.MARKER, replica.core.clock.nanoTime());
        stat.rebuild = this;
        replica.sending.sendTo(source, stat, false);
    }

    void onBlock(NodeResponse r) {
        reading = false;
        if (!r.isOk() || r.read() == null) {
            replica.paths.markNg(target, "cannot READ the rebuild source: " + r.status());
            return;
        }
        progressed();
        boolean end = r.read().messages().isEmpty();
        for (StoredMessage m : r.read().messages()) {
            if (m.position() >= marker) {
                end = true;
                break;
            }
            if (cleared || Ids.isReserved(m.id()) || removedSinceRead(Ids.key(m.id()))) {
                continue;
            }
            // The first pass adds what the target lacks; later passes move what is there to the tail.
            NodeOp kind = pass == 1 ? NodeOp.PUT : NodeOp.PUT_REPLACING;
            ReplicaOp copy = new ReplicaOp(kind, ReplicaOp.Purpose.COPY, replica.core.clock.nanoTime());
            copy.rebuild = this;
            copy.id = m.id();
            copy.body = m.body();
            copy.position = m.position(); // the source's: a reader's cursor is valid on both copies
            ReplicaOp newer = replaced.get(Ids.key(m.id()));
            copy.priority = newer != null ? newer.priority : m.priority();
            copy.notBefore = newer != null ? newer.notBefore : m.notBefore();
            copy.state = newer != null ? newer.state : m.state();
            target.predictedTxn++;
            outstanding++;
            replica.sending.sendTo(target, copy, false);
        }
        cursor = end ? marker : Math.max(cursor + 1, r.read().nextPosition());
        next();
    }

    /**
     * The copy must not bring this message: the first pass skips every id deleted (or replaced by a
     * PUT) during the rebuild, which reached the target live; a re-append pass only those deleted or
     * replaced since its READ was sent (earlier ones are in what the READ returned).
     */
    private boolean removedSinceRead(String key) {
        if (pass == 1) {
            return deleted.contains(key);
        }
        Long at = lastRemoval.get(key);
        return at != null && at > readMark;
    }

    /** @param status the target's own answer; {@code effective}: as the replica counts it (DUPLICATE_ID is a success) */
    void onCopied(ReplicaOp copy, Status status, Status effective) {
        if (pass == 1 && status == Status.DUPLICATE_ID) {
            firstLiveCopied = Math.min(firstLiveCopied, copy.position);
        }
        outstanding--;
        if (effective != Status.OK) {
            replica.paths.markNg(target, "copy refused: " + effective);
            return;
        }
        if (copy.kind == NodeOp.PUT || copy.kind == NodeOp.PUT_REPLACING) {
            copied++;
        } else {
            replayed++;
        }
        progressed();
        next();
    }

    /**
     * The REBASE that ends the copy: the target holds the source's live messages in the source's
     * order as of the last marker, so it takes over the source's (seq, digest) there, and from then
     * on both apply the same mutations. Null when there is none to send (a client CLEAR ended the
     * copy: the copies then compare different at the next open, which rebuilds one again).
     */
    ReplicaOp rebaseOp() {
        if (cleared || baseSeq < 0) {
            return null;
        }
        ReplicaOp op = new ReplicaOp(NodeOp.REBASE, ReplicaOp.Purpose.REBASE, replica.core.clock.nanoTime());
        op.rebuild = this;
        op.fromPosition = baseSeq;
        op.readyBefore = baseDigest;
        op.position = baseNextPosition;
        return op;
    }

    /** The copy will not complete: deferred acks become "not replicated" (the outcome is unknown). */
    void abort(String why) {
        for (ReplicaOp op : deferred) {
            op.ack.complete(org.jameskvs.client.Ack.failed(Status.TIMEOUT, why + ": outcome unknown, not replicated"));
        }
        deferred.clear();
    }

    String progress() {
        return (catchUpFrom >= 0 ? "catching up from seq " + catchUpFrom + " from " : "rebuilding from ") + source.node + ": " + copied + " copied, pass " + pass + ", position " + cursor + "/" + marker;
    }
}
