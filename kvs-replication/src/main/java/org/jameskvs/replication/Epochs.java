package org.jameskvs.replication;

/**
 * Layout of the epoch a replicated writer sends in OPEN (the server only compares them):
 * <pre>
 *  63      43 42          23 22     20 19            0     (bits, most significant first)
 * +----------+--------------+---------+---------------+
 * | counter (23 bits)       | process id (20 bits)    | generation (20 bits)
 * +-------------------------+-------------------------+---------------+
 *  \___________ fencing epoch (43 bits) ____________/
 * </pre>
 * <b>counter</b>: the writer's epoch (OpenOptions.epoch); a takeover or a reclaim uses one more
 * than the highest seen. <b>process id</b>: random per James process, so that two processes
 * choosing the same counter still have distinct, ordered fencing epochs. <b>generation</b>: bumped
 * by the writer for each OPEN it sends (path switch, rebuild target, node back), so that a new
 * connection's OPEN fences the old connection's requests of the same writer without ever
 * overtaking another writer's fencing epoch.
 */
final class Epochs {
    static final int GEN_BITS = 20;
    static final int PID_BITS = 20;

    private Epochs() {
    }

    static long fencing(long counter, int processId) {
        return (counter << PID_BITS) | (processId & ((1 << PID_BITS) - 1));
    }

    static long wire(long fencing, long gen) {
        return (fencing << GEN_BITS) | (gen & ((1 << GEN_BITS) - 1));
    }

    static long fencingOf(long wire) {
        return wire >>> GEN_BITS;
    }

    static long counter(long fencing) {
        return fencing >>> PID_BITS;
    }
}
