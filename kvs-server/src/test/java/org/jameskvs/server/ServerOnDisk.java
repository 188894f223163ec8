package org.jameskvs.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real {@link KvsServer} on a fresh folder for each test ({@code @RegisterExtension}), the set-up the
 * protocol tests share. {@link #restart} stops it cleanly and starts it again on the same folder, so a
 * test can check what a restart keeps.
 */
final class ServerOnDisk implements BeforeEachCallback, AfterEachCallback {
    private final String password;
    private Path dir;
    private KvsServer server;

    ServerOnDisk(String password) {
        this.password = password;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("kvs-server-test");
        server = KvsServer.start(ServerConfig.forTest(dir, password));
    }

    @Override
    public void afterEach(ExtensionContext context) throws IOException {
        server.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    int port() {
        return server.port();
    }

    String password() {
        return password;
    }

    /** A client that has authenticated. */
    RawClient client() throws Exception {
        return RawClient.authenticated(port(), password);
    }

    /** The server's data directory. */
    Path dir() {
        return dir;
    }

    /** Stops the server, deletes everything in its folder (a lost disk), and starts it again on it. */
    void wipeAndRestart() throws IOException {
        server.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(dir)).toList()) {
                Files.deleteIfExists(p);
            }
        }
        restart();
    }

    /** Stops the server and starts it again on the same folder. */
    void restart() {
        restart(UnaryOperator.identity());
    }

    /** Stops the server and starts it again on the same folder, with the test settings changed by {@code change}. */
    void restart(UnaryOperator<java.util.Properties> change) {
        server.close();
        java.util.Properties p = new java.util.Properties();
        p.setProperty("listen.port", "0");
        p.setProperty("data.dir", dir.toString());
        p.setProperty("auth.password", password);
        p.setProperty("metrics.enabled", "false");
        p.setProperty("disk.minFreeBytes", "0");
        server = KvsServer.start(ServerConfig.fromProperties(change.apply(p)));
    }
}
