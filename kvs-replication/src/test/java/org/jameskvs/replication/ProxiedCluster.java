package org.jameskvs.replication;

import org.jameskvs.testkit.FreezableProxy;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.jameskvs.server.storage.StoreConfig;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

/**
 * Real in-process KVS servers (each with its own journal directory and socket), each path (active,
 * standby) of each node behind its own {@link FreezableProxy}, and the real adapter (see
 * {@link ClusterRig}).
 */
final class ProxiedCluster extends ClusterRig {
    final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private final Map<String, FreezableProxy[]> proxies = new LinkedHashMap<>();

    /** {@code nodes} servers named kvs1..kvsN; {@code tune} adjusts the configuration (timings, placement). */
    ProxiedCluster(Path dir, int nodes, UnaryOperator<ReplicationConfig> tune) throws IOException, InterruptedException {
        this(dir, nodes, tune, (name, store) -> store);
    }

    /** As above, with each node's store configured by {@code storeTune} (node name, its default store config). */
    ProxiedCluster(Path dir, int nodes, UnaryOperator<ReplicationConfig> tune,
                   BiFunction<String, StoreConfig, StoreConfig> storeTune) throws IOException, InterruptedException {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            String name = "kvs" + i;
            ServerConfig config = ServerConfig.forTest(dir.resolve(name), PASSWORD);
            KvsServer s = KvsServer.start(config, storeTune.apply(name, config.storeConfig()));
            servers.put(name, s);
            FreezableProxy active = new FreezableProxy(s.port());
            FreezableProxy standby = new FreezableProxy(s.port());
            proxies.put(name, new FreezableProxy[]{active, standby});
            specs.add(new ReplicationConfig.NodeSpec(name, "127.0.0.1", active.port(), "127.0.0.1", standby.port()));
        }
        startOpener(specs, tune);
    }

    /** Stops (or lets again) all traffic on one path of one node, without closing anything. */
    void freeze(String node, NodePath path, boolean frozen) {
        proxy(node, path).freeze(frozen);
    }

    /** Freezes (or lets again) both paths of one node: the node looks silent, nothing is closed. */
    void freezeNode(String node, boolean frozen) {
        freeze(node, NodePath.ACTIVE, frozen);
        freeze(node, NodePath.STANDBY, frozen);
    }

    /** Cuts one path of one node (every connection closed, new ones refused), or mends it. */
    void cut(String node, NodePath path, boolean cut) {
        proxy(node, path).cut(cut);
    }

    /** The node's answers on that path reach the adapter {@code delay} late (ZERO: on time again). */
    void delayAnswers(String node, NodePath path, Duration delay) {
        proxy(node, path).delayAnswers(delay);
    }

    /** The adapter's bytes reach the node on that path at most at this rate (0: no limit). */
    void limitRequestRate(String node, NodePath path, long bytesPerSecond) {
        proxy(node, path).limitRequestRate(bytesPerSecond);
    }

    private FreezableProxy proxy(String node, NodePath path) {
        return proxies.get(node)[path.ordinal()];
    }

    @Override
    int serverPort(String node) {
        return servers.get(node).port();
    }

    @Override
    protected void stopServers() {
        proxies.values().forEach(p -> {
            p[0].close();
            p[1].close();
        });
        servers.values().forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // already closed by the test
            }
        });
    }
}
