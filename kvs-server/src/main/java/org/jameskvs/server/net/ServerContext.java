package org.jameskvs.server.net;

import org.jameskvs.server.ServerConfig;
import org.jameskvs.server.metrics.ServerMetrics;
import org.jameskvs.server.storage.QueueStore;

/** The server-wide, event-loop-confined state every connection's handlers share. */
final class ServerContext {
    final ServerConfig config;
    final QueueStore store;
    final ServerMetrics metrics;
    final WriterRegistry writers = new WriterRegistry();
    final GroupCommitter committer;

    ServerContext(ServerConfig config, QueueStore store, ServerMetrics metrics, GroupCommitter committer) {
        this.config = config;
        this.store = store;
        this.metrics = metrics;
        this.committer = committer;
    }
}
