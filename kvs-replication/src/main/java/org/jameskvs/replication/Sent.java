package org.jameskvs.replication;

/** One transmission of an operation to one member (a retry on the other path is a new one). */
final class Sent {
    final ReplicaOp op;
    /** Sent again after a path switch: it may have been applied already on the lost path. */
    boolean retried;
    long token;
    long sentAt;

    Sent(ReplicaOp op, boolean retried) {
        this.op = op;
        this.retried = retried;
    }
}
