package org.jameskvs.replication;

import org.jameskvs.testkit.FreePorts;
import org.jameskvs.testkit.KvsServerProcess;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * KVS servers as real OS processes ({@link KvsServerProcess}: kill -9 is a real SIGKILL), each on a
 * fixed port and data directory it keeps across restarts, reached by the real adapter directly (both
 * paths of a node go to its one port), see {@link ClusterRig}.
 */
final class ProcessCluster extends ClusterRig {
    private final Path dir;
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final Map<String, KvsServerProcess> processes = new LinkedHashMap<>();

    /** {@code nodes} server processes named kvs1..kvsN; {@code tune} adjusts the configuration. */
    ProcessCluster(Path dir, int nodes, UnaryOperator<ReplicationConfig> tune) throws Exception {
        this.dir = dir;
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        try {
            for (int i = 1; i <= nodes; i++) {
                String name = "kvs" + i;
                int port = FreePorts.next();
                ports.put(name, port);
                start(name);
                specs.add(new ReplicationConfig.NodeSpec(name, "127.0.0.1", port, "127.0.0.1", port));
            }
        } catch (Exception | AssertionError e) {
            stopServers();
            throw e;
        }
        startOpener(specs, tune);
    }

    private void start(String node) throws Exception {
        processes.put(node, KvsServerProcess.in(dir.resolve(node + "-process")).name(node).dataDir(dataDir(node))
                .password(PASSWORD).port(ports.get(node)).fromClassPath().start());
    }

    Path dataDir(String node) {
        return dir.resolve(node);
    }

    /** SIGKILL: no shutdown hook, nothing flushed by the JVM (the page cache survives). */
    void kill9(String node) throws InterruptedException {
        processes.get(node).kill9();
    }

    /** Starts the node again on its port and data directory (after {@link #kill9}). */
    void restart(String node) throws Exception {
        processes.get(node).startAgain();
    }

    /** The node's configuration from its next start: the launcher's lines plus these {@code key=value} lines. */
    void configure(String node, String... properties) throws IOException {
        processes.get(node).configure(properties);
    }

    /** Deletes the node's journal directory: the node must be down. */
    void wipe(String node) throws IOException {
        try (Stream<Path> files = Files.walk(dataDir(node))) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** CPU time the node's server process has used so far (user + system). */
    Duration cpu(String node) {
        return ProcessHandle.of(processes.get(node).pid()).flatMap(h -> h.info().totalCpuDuration())
                .orElseThrow(() -> new IllegalStateException("no CPU time for " + node));
    }

    @Override
    int serverPort(String node) {
        return ports.get(node);
    }

    @Override
    protected void stopServers() {
        for (KvsServerProcess p : processes.values()) {
            try {
                p.kill9(); // the journals are the test's temporary files: no need for a graceful stop
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
