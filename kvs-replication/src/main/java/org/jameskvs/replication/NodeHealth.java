package org.jameskvs.replication;

/**
 * Heartbeat view of one node: the network state of its two paths, fed by PINGs, by every other
 * answer of the node (proof of life too) and by request timeouts. Node-wide (one connection pair
 * per node serves every queue), while the management table shows it per queue.
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

    /**
     * The node answered on path {@code i}: proof of life (a PING answer or any other). A path that
     * is NG is not revived by it: only a PING answer brings it back (the core's one place for that).
     */
    void answered(int i, long now) {
        if (state[i] != NetState.NG && now - lastOk[i] > 0) {
            lastOk[i] = now;
        }
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
