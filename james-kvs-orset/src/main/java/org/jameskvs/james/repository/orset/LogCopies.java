package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.InSyncCopies;
import org.jameskvs.replication.ReplicationConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read access to the copies of the other nodes' logs.
 *
 * <p><b>Single server</b>: one copy, opened read-only through the plug-in's opener.
 *
 * <p><b>Replicated</b> ({@code replication.nodes}): one plain read-only connection per KVS node of the
 * group (to its active path, with the plug-in's credentials and {@code tls.*} settings, as every other
 * connection), a read handle on every node that has a queue of that name, and the log is read on the copies
 * its newest replication record names in sync ({@link InSyncCopies}, applied by
 * {@link NodeLogs#refreshMembers}); the reader applies their union (operations are idempotent and
 * commute, and reading both in-sync copies survives the loss of either). Never every node that has
 * the queue: the replication's open leaves an empty queue on the nodes that are not copies, and an
 * isolated copy keeps its stale content on its node: read, it would bring back mail the log's
 * writer removed and collected, and keep every other node's tombstones alive. Copies hold the
 * replication's own record: readers skip it ({@link org.jameskvs.protocol.ReservedIds}).
 */
final class LogCopies implements AutoCloseable {
    static final String SINGLE = "kvs";
    private static final Logger LOG = LoggerFactory.getLogger(LogCopies.class);

    private final KvsQueueOpener opener;
    private final KvsSpoolConfiguration configuration;
    private final List<String> nodes;
    private final Map<String, KvsSpoolConfiguration> nodeConfigurations = new ConcurrentHashMap<>();
    private final Map<String, KvsClientOpener> clients = new ConcurrentHashMap<>();
    private final Map<String, Long> nextAttempt = new ConcurrentHashMap<>();
    private final Duration retry;
    private volatile boolean closed;

    LogCopies(KvsQueueOpener opener, KvsSpoolConfiguration configuration, Duration retry) {
        this.opener = opener;
        this.configuration = configuration;
        this.retry = retry;
        if (configuration.replicated()) {
            Properties all = configuration.properties();
            ReplicationConfig replication = ReplicationConfig.fromProperties(all);
            for (ReplicationConfig.NodeSpec node : replication.nodes()) {
                Properties p = new Properties();
                p.putAll(all);
                p.remove("replication.nodes");
                p.setProperty("servers", node.activeHost() + ":" + node.activePort());
                p.setProperty("user", all.getProperty("replication.user"));
                p.setProperty("password", all.getProperty("replication.password"));
                nodeConfigurations.put(node.name(), KvsSpoolConfiguration.from(p));
            }
            this.nodes = replication.nodeNames();
        } else {
            this.nodes = List.of(SINGLE);
        }
    }

    /** Where copies may be: the group's nodes, or {@link #SINGLE}. */
    List<String> nodes() {
        return nodes;
    }

    /** Logs are kept on two copies by the replication layer (each copy holds the replication record). */
    boolean replicated() {
        return configuration.replicated();
    }

    /**
     * Opens {@code log} read-only on {@code node}: OK with a handle, NO_SUCH_QUEUE (no copy there),
     * or another status (node unreachable: unknown).
     */
    CompletableFuture<OpenResult> open(String node, String log) {
        if (!configuration.replicated()) {
            return opener.open(log, OpenOptions.reader());
        }
        KvsClientOpener client = client(node);
        if (client == null) {
            return CompletableFuture.completedFuture(new OpenResult(Status.CONNECTION_LOST, "not connected to " + node, null, 0, 0, 0));
        }
        return client.open(log, OpenOptions.reader());
    }

    private KvsClientOpener client(String node) {
        KvsClientOpener client = clients.get(node);
        if (client != null || closed) {
            return client;
        }
        synchronized (this) {
            client = clients.get(node);
            long now = System.nanoTime();
            Long next = nextAttempt.get(node);
            if (client != null || (next != null && now - next < 0)) {
                return client;
            }
            try {
                client = KvsClientOpener.connect(nodeConfigurations.get(node));
                clients.put(node, client);
            } catch (RuntimeException e) {
                nextAttempt.put(node, now + retry.toNanos());
                LOG.warn("OR-set logs: cannot connect to KVS node {} (retry in {} ms): {}", node, retry.toMillis(), e.toString());
            }
            return client;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        clients.values().forEach(KvsClientOpener::close);
        clients.clear();
    }
}
