package org.jameskvs.server;

import java.nio.file.Path;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /metrics} is plain HTTP without a password, so by default it listens on the loopback
 * address only ({@code metrics.host}, default {@code 127.0.0.1}); an operator who wants it elsewhere
 * says so.
 */
class MetricsEndpointBindTest {
    @TempDir
    Path dir;

    @Test
    void byDefaultTheMetricsEndpointListensOnLoopbackOnly() {
        Properties p = ServerConfig.testProperties(dir, "a-test-password");
        p.setProperty("metrics.enabled", "true");
        p.setProperty("metrics.port", "0");
        p.remove("metrics.host");
        try (KvsServer server = KvsServer.start(ServerConfig.fromProperties(p))) {
            assertThat(server.metricsAddress().getAddress().isLoopbackAddress())
                    .as("bound to %s", server.metricsAddress()).isTrue();
            assertThat(server.metricsAddress().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
        }
    }

    @Test
    void metricsHostMovesIt() {
        Properties p = ServerConfig.testProperties(dir, "a-test-password");
        p.setProperty("metrics.enabled", "true");
        p.setProperty("metrics.port", "0");
        p.setProperty("metrics.host", "0.0.0.0");
        try (KvsServer server = KvsServer.start(ServerConfig.fromProperties(p))) {
            assertThat(server.metricsAddress().getAddress().isAnyLocalAddress()).as("bound to %s", server.metricsAddress()).isTrue();
        }
    }
}
