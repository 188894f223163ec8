package org.jameskvs.replication;

/**
 * A queue's lease as the nodes show it: the owner named in the queue's newest replication record
 * ({@link MembershipRecord}) and that record's version. A live owner rewrites the record every
 * {@code leaseRenew}, so two looks taken more than that apart tell a live owner (the version moved)
 * from one that is gone or paused. Deciding a takeover is {@code LeaseWatcher}'s job; this is only
 * what one look shows, for callers outside the package (the James plug-in's start-up check).
 *
 * @param owner the owner name the queue's writer opened it with
 * @param epoch the writer's fencing epoch when it wrote the record
 * @param seq   the record's sequence number within that epoch (grows at every renewal)
 */
public record Lease(String owner, long epoch, long seq) {

    /** True when the record was rewritten since {@code earlier} was seen: its owner is alive. */
    public boolean renewedSince(Lease earlier) {
        return epoch != earlier.epoch || seq != earlier.seq;
    }
}
