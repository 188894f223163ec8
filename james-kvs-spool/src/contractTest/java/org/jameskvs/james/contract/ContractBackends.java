package org.jameskvs.james.contract;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;

/**
 * The backend of the contract suites: by default one real {@link KvsServer} per test JVM, started
 * in-process on a real socket (port 0) with a temporary data directory, reached through a real
 * client connection. {@code -Dkvs.contract.backend=replicated} starts three real servers and keeps
 * every queue on two of them through the replication layer (an ack = two copies).
 * {@code -Dkvs.contract.backend=memory} uses {@link InMemoryKvs} instead.
 */
final class ContractBackends {
    private static final String PASSWORD = "contract-secret";
    private static final boolean MEMORY = "memory".equals(System.getProperty("kvs.contract.backend"));
    private static final boolean REPLICATED = "replicated".equals(System.getProperty("kvs.contract.backend"));
    private static Properties serverProperties;

    private ContractBackends() {
    }

    static KvsQueueOpener opener() {
        if (MEMORY) {
            return new InMemoryKvs();
        }
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(clientProperties().orElseThrow());
        return configuration.replicated() ? org.jameskvs.james.ReplicatedKvsOpener.start(configuration)
            : KvsClientOpener.connect(configuration);
    }

    /** kvs-spool.properties keys reaching the test server; empty with the in-memory backend. */
    static synchronized Optional<Properties> clientProperties() {
        if (MEMORY) {
            return Optional.empty();
        }
        if (serverProperties == null) {
            serverProperties = startServer();
        }
        Properties copy = new Properties();
        copy.putAll(serverProperties);
        return Optional.of(copy);
    }

    private static Properties startServer() {
        Properties properties = new Properties();
        properties.setProperty("user", "james");
        properties.setProperty("password", PASSWORD);
        if (REPLICATED) {
            StringBuilder names = new StringBuilder();
            for (int i = 1; i <= 3; i++) {
                int port = startOneServer();
                names.append(i > 1 ? "," : "").append("kvs").append(i);
                properties.setProperty("replication.node.kvs" + i + ".active", "127.0.0.1:" + port);
            }
            properties.setProperty("replication.nodes", names.toString());
            properties.setProperty("servers", "127.0.0.1:1"); // not used when replication.nodes is set
            return properties;
        }
        properties.setProperty("servers", "127.0.0.1:" + startOneServer());
        return properties;
    }

    private static int startOneServer() {
        Path dataDir;
        try {
            dataDir = Files.createTempDirectory("kvs-contract-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        KvsServer server = KvsServer.start(ServerConfig.forTest(dataDir, PASSWORD));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            deleteRecursively(dataDir);
        }));
        return server.port();
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // best effort: a temp dir
        }
    }
}
