package org.jameskvs.replication;

import java.util.function.Consumer;

/**
 * One transmission of an operation to one member (a retry on the other path is a new one). It is
 * also the answer's callback (no lambda per request).
 */
final class Sent implements Consumer<NodeResponse> {
    final QueueReplica replica;
    final Member member;
    final ReplicaOp op;
    /** Sent again after a path switch: it may have been applied already on the lost path. */
    boolean retried;
    /**
     * The queue seq this mutation carries to this copy (0: unsequenced), given at its first
     * transmission and kept for retries: a repeat is answered with the first outcome.
     */
    long seq;
    long token;
    long sentAt;

    Sent(QueueReplica replica, Member member, ReplicaOp op, boolean retried) {
        this.replica = replica;
        this.member = member;
        this.op = op;
        this.retried = retried;
    }

    @Override
    public void accept(NodeResponse r) {
        replica.answers.onAnswer(member, this, r);
        if (seq > 0) {
            replica.commitPoint.afterAnswer(); // may send a COMMIT: after the answer's processing
        }
    }
}
