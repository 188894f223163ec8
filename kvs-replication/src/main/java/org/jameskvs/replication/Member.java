package org.jameskvs.replication;

import java.util.ArrayDeque;

/**
 * One copy of a replicated queue on one node: a row of the management table. Requests on the
 * member's current path are answered in order (one TCP connection), which the transaction
 * accounting relies on.
 */
final class Member {
    final String node;
    SyncState sync;
    NodePath path;
    /** Wire epoch of our write handle on this node: (fencing epoch << 20) | generation. */
    long wireEpoch;
    /**
     * The node's store this copy lives in, from the first OPEN answer (0: not known yet). Another one
     * later means the node lost its disk: the copy is gone, whatever its numbers say.
     */
    long store;
    /** Our write handle at {@link #wireEpoch} is open on {@link #path}; else requests wait in {@link #backlog}. */
    boolean open;
    long openToken;
    long openSentAt;
    /**
     * When the copy last answered a request on its path (core clock): answers come in request order,
     * so while they keep coming the oldest request in flight is queued behind them, not lost.
     */
    long lastAnswerAt = Long.MIN_VALUE;
    /**
     * When the copy's node last drained bytes of a request still being sent on its path (core
     * clock): a frame near the 64 MiB limit may take longer than any request timeout to send.
     */
    long lastSendProgressAt = Long.MIN_VALUE;
    /**
     * A SYNC copy that became unreachable while no other SYNC copy was reachable: it is kept (it is
     * the authority) and the queue refuses writes until it is back.
     */
    boolean lost;
    /** Mutations and write OPENs that were in flight unanswered (then abandoned): they may land later. */
    long uncertain;
    /**
     * The copy's server flags it DAMAGED (journal records of it lost at recovery), as of its last
     * OPEN answer; a CLEAR ends it. Kept only as the only in-sync copy (with an ALARM), else rebuilt.
     */
    boolean damaged;
    /** The copy holds the replication record (so a record write is a REPLACE, else a PUT). */
    boolean hasRecord;
    /** Transaction number of the copy after the last answered mutation (exact: set by each OPEN). */
    long txn = -1;
    /**
     * The queue seq this copy holds as far as we know (its OPEN answer, then each answer to a
     * sequenced mutation); -1 unknown. With {@link #sentSeq}, the bounds a reopened copy's seq must
     * fall in: below means it lost mutations, above that someone else wrote to it.
     */
    long seq = -1;
    /**
     * The content digest this copy has at {@link #seq}, as the writer folds it from its answers (see
     * {@link CatchUp}); valid only while {@link #digestKnown}.
     */
    long digest;
    boolean digestKnown;
    /** The highest queue seq sent to this copy. */
    long sentSeq = -1;
    /**
     * This copy's seqs stopped being the other copy's (a SEQ_GAP renumbered a suffix, or it was
     * re-based on its own last seq): its positions (a PUT's position is its seq) may differ, so a
     * reader switching to or from it rescans. Ends with the member (a rebuilt copy is a new one).
     */
    boolean positionsDiverged;
    /** A rebuild target's own PUTs so far (numbered from {@link Rebuild#OWN_POSITIONS_FROM}). */
    long ownPositions;
    /**
     * Seq of the latest record this copy applied while SYNC with nothing retried since, and the
     * exact transaction number right after it; -1 once a retry or a state change makes the copy's
     * mutation stream differ from the other copy's (see {@link MembershipRecord}).
     */
    long recordSeq = -1;
    long recordTxn = -1;
    /** Predicted transaction number once every dispatched mutation is applied; written in the record. */
    long predictedTxn;
    final ArrayDeque<Sent> inflight = new ArrayDeque<>();
    final ArrayDeque<Sent> backlog = new ArrayDeque<>();
    /**
     * A rebuild target during its last re-append pass: new mutations wait in {@link #held} and follow
     * the re-appended messages, so that the rebuilt copy keeps the source's order (see {@link Rebuild}).
     */
    boolean holding;
    final ArrayDeque<Sent> held = new ArrayDeque<>();
    /**
     * The commit point's queue ({@link CommitPoint}): sequenced mutations sent to this copy, in seq
     * order, from the oldest not yet settled.
     */
    final ArrayDeque<Sent> unsettled = new ArrayDeque<>();
    /** The commit point in this copy's seqs: every seq up to it is settled; -1 unknown. */
    long committed = -1;
    /** The highest commit point sent to this copy (with a mutation or a COMMIT); -1: none. */
    long committedSent = -1;

    Member(String node, SyncState sync, NodePath path) {
        this.node = node;
        this.sync = sync;
        this.path = path;
    }

    /**
     * A PUT on this copy took the position it took on the other copy: the same seq (see the
     * protocol). Whatever became of the copy since (lost, isolated): what a reader read from it was
     * numbered so.
     */
    boolean sharesPositions() {
        return sentSeq >= 0 && !positionsDiverged;
    }

    boolean writable() {
        return !lost && (sync == SyncState.SYNC || sync == SyncState.REBUILDING);
    }

    @Override
    public String toString() {
        return node + "(" + sync + (lost ? ",lost" : "") + (damaged ? ",DAMAGED" : "") + "," + path
                + (open ? "" : ",opening") + ",txn=" + txn + ")";
    }
}
