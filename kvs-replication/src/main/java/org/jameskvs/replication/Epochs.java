package org.jameskvs.replication;

/**
 * Layout of the epoch a replicated writer sends in OPEN (the server only compares them, as signed
 * 64-bit numbers that must not be negative):
 * <pre>
 *  63  62            40 39            20 19             0     (bits, most significant first)
 * +---+----------------+----------------+----------------+
 * | 0 | counter (23)   | process id (20)| generation (20)|
 * +---+----------------+----------------+----------------+
 *      \__ fencing epoch (43 bits) ____/
 * </pre>
 * <b>counter</b>: the writer's epoch (OpenOptions.epoch); a takeover or a reclaim uses one more
 * than the highest seen. <b>process id</b>: random per James process, so that two processes
 * choosing the same counter still have distinct, ordered fencing epochs. <b>generation</b>: bumped
 * by the writer for each OPEN it sends (path switch, rebuild target, node back), so that a new
 * connection's OPEN fences the old connection's requests of the same writer without ever
 * overtaking another writer's fencing epoch.
 *
 * <p><b>No wrap.</b> Nothing here ever wraps around: a wrapped epoch would compare lower and fence
 * its own writer. A writer that used up the generations of its fencing epoch (about a million
 * OPENs) reclaims the queue, like a restarted owner: a new counter, generations from 1 again
 * ({@link QueueReplica}). A counter beyond {@link #MAX_COUNTER} (8,388,607 takeovers, or an epoch
 * given by the caller) is refused with a clear error instead of overflowing into the sign bit.
 */
final class Epochs {
    static final int GEN_BITS = 20;
    static final int PID_BITS = 20;
    static final int COUNTER_BITS = 63 - GEN_BITS - PID_BITS;
    /** The highest writer epoch counter (23 bits: the wire epoch stays a non-negative long). */
    static final long MAX_COUNTER = (1L << COUNTER_BITS) - 1;
    /** The highest generation: a writer needs a new fencing epoch (a reclaim) beyond it. */
    static final long MAX_GEN = (1L << GEN_BITS) - 1;

    /**
     * How far above the newest record's epoch counter an open fences when a node that record names
     * lost its disk since ({@link HeardNodes#lostDiskSince}). Epochs fenced only on that node (a
     * takeover, a reclaim or a failed open while the other node of a two-node group was down) went
     * with its disk; each took one more than the highest it saw, so they lie below this floor unless
     * more than this many opens fenced that node alone after the record was written (a failed open
     * retried every few seconds for hours). An open retried after one that fenced at the floor
     * starts above it: the floor is paid once per record, 4,096 of the 8,388,607 counters.
     */
    static final long LOST_DISK_MARGIN = 4096;

    private Epochs() {
    }

    static long fencing(long counter, int processId) {
        if (counter < 0 || counter > MAX_COUNTER) {
            throw new IllegalArgumentException("epoch counter " + counter + " outside 0.." + MAX_COUNTER);
        }
        return (counter << PID_BITS) | (processId & ((1 << PID_BITS) - 1));
    }

    static long wire(long fencing, long gen) {
        if (gen < 0 || gen > MAX_GEN) {
            throw new IllegalArgumentException("generation " + gen + " outside 0.." + MAX_GEN);
        }
        return (fencing << GEN_BITS) | gen;
    }

    static long fencingOf(long wire) {
        return wire >>> GEN_BITS;
    }

    static long counter(long fencing) {
        return fencing >>> PID_BITS;
    }
}
