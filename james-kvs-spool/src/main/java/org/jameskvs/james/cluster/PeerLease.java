package org.jameskvs.james.cluster;

import java.time.Duration;
import java.util.Optional;

import org.jameskvs.replication.Lease;

/**
 * What this node knows of one peer's lease (its spool's writer record): the last record seen and how
 * long, by this node's clock, it has not changed. The rule is kvs-replication's {@code LeaseWatcher}
 * (expired = the same version for {@code leaseTimeout} of the watcher's own clock, so James nodes need
 * no clock agreement), applied to the public {@link Lease} a peek returns. A look that saw no record
 * (no copy answered in time) neither renews nor expires it: it says nothing.
 */
final class PeerLease {
    private final Duration timeout;
    private Lease last;
    private long unchangedSinceNanos;

    PeerLease(Duration timeout) {
        this.timeout = timeout;
    }

    /** Records one look at the lease; @return true when it has now expired. */
    boolean observe(Optional<Lease> seen, long nowNanos) {
        if (seen.isEmpty()) {
            return false;
        }
        if (last == null || seen.get().renewedSince(last)) {
            last = seen.get();
            unchangedSinceNanos = nowNanos;
            return false;
        }
        return nowNanos - unchangedSinceNanos >= timeout.toNanos();
    }

    Optional<Lease> last() {
        return Optional.ofNullable(last);
    }

    /** How long the lease has gone without renewal (zero before the first look). */
    Duration unrenewedFor(long nowNanos) {
        return last == null ? Duration.ZERO : Duration.ofNanos(nowNanos - unchangedSinceNanos);
    }
}
