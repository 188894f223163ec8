package org.jameskvs.replication;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The nodes whose store refused a write (DISK_FULL, STORAGE_ERROR), and until when no rebuild may
 * start onto them. One table per process, shared by every queue: a node keeps all its queues in one
 * journal, so a node that refused a write of one queue will refuse a rebuild of any other. (Kept per
 * queue before, a full node still drew the first rebuild of every other queue, each refused and
 * isolated in turn.) Without any wait a node that stays full was chosen again at once, refused again
 * and isolated again: a rebuild attempt about twice a second per queue, and a log line each time, for
 * as long as the disk stayed full (DiskFullIntakeE2ETest's logs).
 *
 * <p>The wait is 1 s after the first refusal and doubles at each refusal after the wait ended, up to
 * 30 s; refusals inside a wait count once, whichever queue saw them; a refusal more than 30 s after
 * the wait ended starts over at 1 s, as does a PUT the node took (of any queue: its journal takes
 * writes again). Core thread only, like the rest of the state machine.
 */
final class RefusingStores {
    static final long FIRST_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long MAX_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** A node's wait: no rebuild onto it before {@code notBefore}. */
    private static final class Wait {
        long notBefore;
        long waitNanos;
    }

    private final Map<String, Wait> waits = new HashMap<>();

    /**
     * The node's store refused a write at {@code now}.
     *
     * @return the wait this refusal starts, in nanoseconds; 0 when it came inside the current wait
     *         (counted once: nothing new to announce)
     */
    long refused(String node, long now) {
        Wait w = waits.get(node);
        if (w == null) {
            w = new Wait();
            w.waitNanos = FIRST_WAIT_NANOS;
            waits.put(node, w);
        } else if (now - w.notBefore < 0) {
            return 0;
        } else if (now - w.notBefore > MAX_WAIT_NANOS) {
            w.waitNanos = FIRST_WAIT_NANOS; // the last refusal is long past: start over
        } else {
            w.waitNanos = Math.min(w.waitNanos * 2, MAX_WAIT_NANOS);
        }
        w.notBefore = now + w.waitNanos;
        return w.waitNanos;
    }

    /** The node's store took a PUT: it writes again; its next refusal waits 1 s. */
    void accepted(String node) {
        if (!waits.isEmpty()) {
            waits.remove(node);
        }
    }

    /** Whether a rebuild may start onto the node now (no refusal since its last PUT, or the wait is over). */
    boolean mayRebuildOnto(String node, long now) {
        Wait w = waits.get(node);
        return w == null || now - w.notBefore >= 0;
    }

    /** The nodes that refused a write and took no PUT since, sorted (for events). */
    Set<String> nodes() {
        return new TreeSet<>(waits.keySet());
    }
}
