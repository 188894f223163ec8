package org.jameskvs.server;

import java.nio.file.Path;
import java.util.Properties;

/**
 * The server properties of a test server, for tests that add or change some before
 * {@link ServerConfig#fromProperties}: the same as {@link ServerConfig#forTest} (any free port,
 * metrics off, no free-disk floor, the given folder and password). Shared through the test-jar.
 */
public final class TestServerProperties {
    private TestServerProperties() {
    }

    public static Properties of(Path dataDir, String password) {
        Properties p = new Properties();
        p.setProperty("listen.port", "0");
        p.setProperty("data.dir", dataDir.toString());
        p.setProperty("auth.password", password);
        p.setProperty("metrics.enabled", "false");
        p.setProperty("disk.minFreeBytes", "0");
        return p;
    }
}
