package org.jameskvs.server;

import java.net.InetSocketAddress;

import org.jameskvs.server.metrics.PrometheusEndpoint;
import org.jameskvs.server.metrics.ServerMetrics;
import org.jameskvs.server.net.NetworkServer;
import org.jameskvs.server.storage.QueueStore;
import org.jameskvs.server.storage.StoreConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running KVS server: the journal ({@link QueueStore}), the protocol listener and the metrics
 * endpoint. {@link #start} returns once the journal is recovered and the port is bound.
 */
public final class KvsServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvsServer.class);

    private final QueueStore store;
    private final NetworkServer network;
    private final PrometheusEndpoint metricsEndpoint;
    private final ServerMetrics metrics;

    private KvsServer(QueueStore store, NetworkServer network, PrometheusEndpoint metricsEndpoint, ServerMetrics metrics) {
        this.store = store;
        this.network = network;
        this.metricsEndpoint = metricsEndpoint;
        this.metrics = metrics;
    }

    public static KvsServer start(ServerConfig config) {
        return start(config, config.storeConfig());
    }

    /**
     * Like {@link #start(ServerConfig)} with storage settings of its own: for tests and embedding
     * that need journal tuning the config file does not offer (a roll cycle and clock that roll
     * journal files at will).
     */
    public static KvsServer start(ServerConfig config, StoreConfig storeConfig) {
        long t0 = System.nanoTime();
        QueueStore store = QueueStore.open(storeConfig);
        LOG.info("journal {} recovered in {} ms: {} queue(s)", config.dataDir(),
                (System.nanoTime() - t0) / 1_000_000, store.queues().size());
        ServerMetrics metrics = new ServerMetrics();
        metrics.journalSize(store, s -> ((QueueStore) s).journalBytes());
        metrics.fsyncs(store, s -> ((QueueStore) s).fsyncs());
        NetworkServer network;
        try {
            network = new NetworkServer(config, store, metrics);
        } catch (Exception e) {
            store.close();
            throw new IllegalStateException("cannot start the protocol listener on " + config.listenHost() + ":"
                    + config.listenPort(), e);
        }
        PrometheusEndpoint endpoint = null;
        if (config.metricsEnabled()) {
            endpoint = new PrometheusEndpoint(metrics, config.metricsHost(), config.metricsPort());
        }
        LOG.info("KVS server listening on {}:{} ({}), metrics {}", config.listenHost(), network.port(),
                config.tlsEnabled() ? "TLS" : "plain TCP",
                endpoint == null ? "off" : "http://" + config.metricsHost() + ":" + endpoint.port() + "/metrics");
        return new KvsServer(store, network, endpoint, metrics);
    }

    public int port() {
        return network.port();
    }

    /** -1 when metrics are off. */
    public int metricsPort() {
        return metricsEndpoint == null ? -1 : metricsEndpoint.port();
    }

    /** The address the metrics endpoint is bound to; null when metrics are off. */
    public InetSocketAddress metricsAddress() {
        return metricsEndpoint == null ? null : metricsEndpoint.address();
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    /** Runs a task on the thread that owns the store (tests, admin). */
    public <T> T onStoreThread(java.util.concurrent.Callable<T> task) throws Exception {
        return network.onStoreThread(task);
    }

    public QueueStore store() {
        return store;
    }

    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    /** Stops the server; a second call does nothing (a stopped event loop cannot close the store again). */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        network.close();
        if (metricsEndpoint != null) {
            metricsEndpoint.close();
        }
        LOG.info("KVS server stopped");
    }
}
