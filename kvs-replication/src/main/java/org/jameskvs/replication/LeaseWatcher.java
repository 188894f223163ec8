package org.jameskvs.replication;

import java.time.Duration;

/**
 * Decides when another James node's lease on a queue has expired.
 *
 * <p>The lease: the owner rewrites its record ({@link MembershipRecord}, a fenced mutation inside
 * the queue on both copies) every {@code leaseRenew} (2 s); each rewrite has a higher version. A
 * watcher reads the record now and then and considers the lease expired when the version it sees
 * has not changed for {@code leaseTimeout} (10 s) <i>of its own clock</i>: no clock agreement
 * between James nodes is needed, only that time passes at roughly the same rate.
 *
 * <p>The lease only decides <i>when</i> to take over; safety never depends on it: a takeover fences
 * the copies with a higher epoch, after which the old owner's mutations are refused even if it is
 * still alive (a long GC pause, a partition). An old owner that was merely slow loses its queue.
 */
final class LeaseWatcher {
    private final long timeoutNanos;
    private long lastEpoch = Long.MIN_VALUE;
    private long lastSeq = Long.MIN_VALUE;
    private long unchangedSince;
    private boolean seen;

    LeaseWatcher(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    /**
     * @param record the newest record found (null: no record, the queue has no owner)
     * @return true when the lease is free: no record, or the same version for longer than the timeout
     */
    boolean expired(long now, MembershipRecord record) {
        if (record == null) {
            return true;
        }
        if (!seen || record.epoch() != lastEpoch || record.seq() != lastSeq) {
            seen = true;
            lastEpoch = record.epoch();
            lastSeq = record.seq();
            unchangedSince = now;
            return false;
        }
        return now - unchangedSince >= timeoutNanos;
    }
}
