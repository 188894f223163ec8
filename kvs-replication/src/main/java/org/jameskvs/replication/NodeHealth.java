package org.jameskvs.replication;

/**
 * Heartbeat view of one node: the network state of its two paths, fed by PINGs and by request
 * timeouts. Node-wide (one connection pair per node serves every queue), while the management
 * table shows it per queue.
 */
final class NodeHealth {
    final String node;
    private final NetState[] state = {NetState.READY, NetState.READY};
    final long[] lastOk = new long[2];
    final long[] lastPingSent = new long[2];
    final long[] pingToken = new long[2];

    NodeHealth(String node, long now) {
        this.node = node;
        // Optimistic start: a node is presumed reachable until a heartbeat timeout says otherwise.
        lastOk[0] = lastOk[1] = now;
        lastPingSent[0] = lastPingSent[1] = Long.MIN_VALUE / 2;
    }

    NetState state(NodePath p) {
        return state[p.ordinal()];
    }

    void set(NodePath p, NetState s) {
        state[p.ordinal()] = s;
    }

    boolean up() {
        return state[0] != NetState.NG || state[1] != NetState.NG;
    }

    /** The path to use for new traffic: the active one unless it is NG. */
    NodePath bestPath() {
        return state[0] != NetState.NG ? NodePath.ACTIVE : NodePath.STANDBY;
    }
}
