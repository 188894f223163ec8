package org.jameskvs.james.repository.orset;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real in-process KVS servers (port 0, temp dirs): one, or with {@code -Dorset.replicated=true}
 * three with every queue on two of them through the replication layer. Each "James node" gets its
 * own connection(s).
 */
final class OrSetTestKvs implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    private static final String PASSWORD = "orset-secret";
    static final boolean REPLICATED = Boolean.getBoolean("orset.replicated");
    private Path dir;
    private final List<KvsServer> servers = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    /** Servers for one test class: {@code @RegisterExtension static final OrSetTestKvs kvs = new OrSetTestKvs();} */
    OrSetTestKvs() {
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("kvs-orset-");
        for (int i = 0; i < (REPLICATED ? 3 : 1); i++) {
            servers.add(KvsServer.start(ServerConfig.forTest(dir.resolve("node" + i), PASSWORD)));
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    /** A James node: its connection ({@link KvsQueueOpener}) and its {@link KvsQueues} (owner = node id). */
    record Node(String id, org.jameskvs.james.KvsQueueOpener opener, KvsQueues queues) {
    }

    synchronized Node node(String namespace, String nodeId) {
        Properties p = new Properties();
        p.setProperty("servers", "127.0.0.1:" + servers.get(0).port());
        if (REPLICATED) {
            StringBuilder names = new StringBuilder();
            for (int i = 0; i < servers.size(); i++) {
                names.append(i > 0 ? "," : "").append("kvs").append(i);
                p.setProperty("replication.node.kvs" + i + ".active", "127.0.0.1:" + servers.get(i).port());
            }
            p.setProperty("replication.nodes", names.toString());
        }
        OrSetCopyNodes.setIdentity(p, PASSWORD, namespace, nodeId);
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(p);
        org.jameskvs.james.KvsQueueOpener opener = configuration.replicated()
            ? org.jameskvs.james.ReplicatedKvsOpener.start(configuration) : KvsClientOpener.connect(configuration);
        KvsQueues queues = new KvsQueues(opener, configuration);
        closeables.add((AutoCloseable) opener);
        closeables.add(queues);
        return new Node(nodeId, opener, queues);
    }

    @Override
    public synchronized void close() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        servers.forEach(KvsServer::close);
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // temp dir
        }
    }
}
