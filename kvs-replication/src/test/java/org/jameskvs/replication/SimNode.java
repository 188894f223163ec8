package org.jameskvs.replication;

import org.jameskvs.protocol.StoredMessage;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * A KVS server as {@link SimWorld} drives it: connections open and close, requests are applied one
 * at a time on the world's thread, the process restarts with or without its data. Two kinds:
 * {@link RealNode} (the real server: its QueueStore and its protocol pipeline, no sockets) and
 * {@link SimServer} (a model of it, for tests that need what the real one cannot give: injected
 * loss of single journal records, counters of repeats).
 */
interface SimNode {
    String name();

    void connectionOpened(long conn);

    void connectionClosed(long conn);

    /** The process restarts: connections and writer claims gone; data kept only if {@code keepData}. */
    void restart(boolean keepData);

    /**
     * The process restarts with its data; with {@code storeFull} its store refuses PUTs from then on
     * (DISK_FULL, its journal limit set at what its journal holds; deletes and the like go on into the
     * reserve), until a restart without it. A node without a store ignores the limit.
     */
    default void restartStoreFull(boolean storeFull) {
        restart(true);
    }

    /** @param handle the server handle the client uses for the queue on this connection (0 for OPEN and PING); OPEN answers its handle in {@code value} */
    NodeResponse apply(long conn, int handle, NodeRequest r);

    /** The queue as this node holds it now (what a restart would replay), or null when it has none. */
    QueueView view(String queue);

    /**
     * Whether the node holds message {@code id} in {@code queue} now (cheaper than a {@link #view}).
     *
     * @return null when the node has no such queue
     */
    Probe probe(String queue, String id);

    /** The world is over: its connections go; the node may serve the next world (see {@link RealNode.Pool}). */
    default void dispose() {
    }

    /** @param epoch the queue's fencing epoch on this node */
    record Probe(boolean present, long epoch) {
    }

    /** One copy's state, messages in position order (the replication record included). */
    record QueueView(long txn, long epoch, long seq, long digest, boolean damaged, List<StoredMessage> messages) {
        StoredMessage find(String id) {
            byte[] b = id.getBytes(StandardCharsets.UTF_8);
            for (StoredMessage m : messages) {
                if (Arrays.equals(m.id(), b)) {
                    return m;
                }
            }
            return null;
        }
    }
}
