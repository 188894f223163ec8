package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One logical operation of a replicated queue: a client call, or one of the replication's own
 * steps. A mutation is sent to every write member and completes once each of them answered (or was
 * isolated, which makes the outcome "not replicated").
 */
final class ReplicaOp {
    /** Why the operation exists; decides what its answers mean. */
    enum Purpose {
        CLIENT,
        /** the membership/lease record (REPLACE, or PUT where the copy has none yet) */
        RECORD,
        /** CLEAR of a rebuild target before anything else reaches it */
        CLEAR_TARGET,
        /** STAT on the rebuild source: where the copy stops (later messages arrive live) */
        MARKER,
        /**
         * STAT on the would-be rebuild source before a rebuild starts: its node still holds the
         * copy's store (see {@code RecordAndRebuild#startRebuildIfPossible})
         */
        SOURCE_CHECK,
        /** one READ block from the rebuild source */
        COPY_READ,
        /** one message copied to the rebuild target */
        COPY,
        /** the rebuild target takes over the source's seq and digest (read at the last marker) */
        REBASE,
        /**
         * DELETE undoing a client PUT that failed and may have been applied on a copy (see
         * {@link UncommittedPuts}): a sequenced mutation like a client one, NOT_FOUND counting as done
         */
        UNDO,
        /**
         * conditional REBASE: a copy takes the other copy's digest at the same seq, their content being
         * equal (see {@code CatchUp#alignIfQuiet})
         */
        ALIGN
    }

    final NodeOp kind;
    /** The queue seq the writer gave this mutation (client mutations and record writes); 0: none. */
    long seq;
    final Purpose purpose;
    final long createdAt;
    byte[] id;
    int priority;
    long notBefore;
    byte[] state;
    byte[] body;
    long fromPosition;
    /** COPY: the source's position of the message copied; REBASE: the source's next position (0: none). */
    long position;
    /** READ: the read-copy generation of the copy it was sent to (positions are per copy). */
    int positionSpace;
    int maxCount;
    int maxBytes;
    long readyBefore;
    /** CRC32C of the id and of the content, for the writer's digest (computed once, at the first answer). */
    int idCrc;
    int contentCrc;
    boolean crcsKnown;
    /**
     * The seq and outcome of this mutation as a copy last answered it (for the catch-up log: a
     * copy that leaves with it unanswered gets the survivor's outcome from here, see CatchUp.departed).
     */
    long answeredSeq;
    org.jameskvs.protocol.Status answeredStatus;
    /**
     * The copy that answered this mutation without a queue seq (a rebuild target, an unsequenced copy),
     * or null: its answer is outside the seq stream, so when the copies disagree it does not decide.
     */
    Member answeredUnsequenced;

    CompletableFuture<Ack> ack;
    CompletableFuture<GetResult> get;
    CompletableFuture<ReadResult> read;
    CompletableFuture<QueueStat> stat;

    // The members whose answer is awaited: two in fields (the usual case), more in a set.
    private Member await0;
    private Member await1;
    private Set<Member> awaitMore;
    final MemberMap<NodeResponse> answers = new MemberMap<>();
    /** Effective status per member after the replication's reading of it (DUPLICATE_ID on a retry = OK, ...). */
    final MemberMap<org.jameskvs.protocol.Status> effective = new MemberMap<>();
    /**
     * Members whose answer cannot tell applied from absent: a retried PUT answering DUPLICATE_ID or
     * a retried DELETE answering NOT_FOUND (the first try may have been applied), a rebuild target
     * answering NOT_FOUND to a DELETE/REPLACE of a message not copied yet. They take the outcome of
     * the other copy; when every answer is like that the mutation succeeded.
     */
    Set<Member> ambiguous = Set.of(); // rare: a real set on the first add (see addAmbiguous)
    /** A member that should have taken this mutation was isolated: the outcome is not two copies. */
    boolean degraded;
    boolean done;
    /**
     * A REPLACE the rebuild target answered NOT_FOUND (message not copied yet): the new state is on
     * one copy only until the copier brings the message over, so the ack waits for the rebuild.
     */
    boolean awaitsCopy;
    /** The rebuild a MARKER / COPY_READ / COPY belongs to: answers of an aborted rebuild are ignored. */
    Rebuild rebuild;
    /** RECORD: the version written. */
    long recordSeq = -1;
    Ack deferredAck;
    /** Applied on this copy only (the other was lost): acked when a rebuild from it completes. */
    Member parkedOn;
    long parkedAt;

    ReplicaOp(NodeOp kind, Purpose purpose, long now) {
        this.kind = kind;
        this.purpose = purpose;
        this.createdAt = now;
    }

    void await(Member m) {
        if (m == await0 || m == await1 || (awaitMore != null && awaitMore.contains(m))) {
            return;
        }
        if (await0 == null) {
            await0 = m;
        } else if (await1 == null) {
            await1 = m;
        } else {
            if (awaitMore == null) {
                awaitMore = MemberMap.newSet();
            }
            awaitMore.add(m);
        }
    }

    void answered(Member m) {
        if (await0 == m) {
            await0 = null;
        }
        if (await1 == m) {
            await1 = null;
        }
        if (awaitMore != null) {
            awaitMore.remove(m);
        }
    }

    boolean awaitsAny() {
        return await0 != null || await1 != null || (awaitMore != null && !awaitMore.isEmpty());
    }

    void awaitNone() {
        await0 = null;
        await1 = null;
        awaitMore = null;
    }

    void addAmbiguous(Member m) {
        if (ambiguous.isEmpty()) {
            ambiguous = MemberMap.newSet();
        }
        ambiguous.add(m);
    }

    boolean isClientRead() {
        return purpose == Purpose.CLIENT && !kind.isMutation();
    }
}
