package org.jameskvs.james.queue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;

/**
 * Two real in-process KVS servers (real sockets on port 0, temporary journals) and the plug-in's
 * replication layer over them: every queue on both, an ack meaning two copies, as a James with two
 * KVS nodes runs. Closing stops the connections, then the servers, then deletes the journals.
 */
final class TwoKvsNodes implements AutoCloseable {
    private static final String PASSWORD = "two-nodes-secret";
    private final Path dir;
    private final List<KvsServer> servers = new ArrayList<>();
    private final List<AutoCloseable> openers = new ArrayList<>();

    TwoKvsNodes() throws IOException {
        dir = Files.createTempDirectory("kvs-two-nodes-");
        for (int i = 1; i <= 2; i++) {
            servers.add(KvsServer.start(ServerConfig.forTest(dir.resolve("node" + i), PASSWORD)));
        }
    }

    /** kvs-spool.properties naming both nodes, plus the test's own settings. */
    KvsSpoolConfiguration configuration(String... settings) {
        Properties p = new Properties();
        p.setProperty("user", "james");
        p.setProperty("password", PASSWORD);
        p.setProperty("replication.nodes", "node1,node2");
        for (int i = 1; i <= servers.size(); i++) {
            p.setProperty("replication.node.node" + i + ".active", "127.0.0.1:" + servers.get(i - 1).port());
        }
        p.setProperty("requestTimeout", "10000");
        p.setProperty("nodeId", "james"); // the tests' node, unless they name one (the default is the host name)
        for (int i = 0; i + 1 < settings.length; i += 2) {
            p.setProperty(settings[i], settings[i + 1]);
        }
        return KvsSpoolConfiguration.from(p);
    }

    /** A James node's connections to both servers, optionally wrapped (e.g. to hold answers back). */
    synchronized KvsQueueOpener connect(KvsSpoolConfiguration configuration, UnaryOperator<KvsQueueOpener> wrap) {
        ReplicatedKvsOpener opener = ReplicatedKvsOpener.start(configuration);
        openers.add(opener);
        return wrap.apply(opener);
    }

    @Override
    public synchronized void close() {
        for (AutoCloseable opener : openers) {
            try {
                opener.close();
            } catch (Exception e) {
                // best effort: the servers stop next
            }
        }
        servers.forEach(KvsServer::close);
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temporary directory
        }
    }
}
