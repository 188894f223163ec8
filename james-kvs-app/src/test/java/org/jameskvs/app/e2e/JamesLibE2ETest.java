package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * target/james/lib is what a user copies into James: James and the plug-in, and none of the
 * benchmark's jars (the ActiveMQ baseline, the charts, the SMTP test tools live in james-kvs-bench and
 * kvs-testkit). Runs after package, like the other e2e tests, since that is when the folder is built.
 */
class JamesLibE2ETest {
    private static final List<String> BENCHMARK_ONLY = List.of(
        "activemq-", "artemis-", "james-server-queue-activemq-", "jfreechart-", "kvs-testkit-", "james-kvs-bench-");

    @Test
    void holdsJamesAndThePlugInAndNoBenchmarkJar() throws Exception {
        List<String> jars;
        try (Stream<Path> files = Files.list(JamesProcess.lib())) {
            jars = files.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertThat(jars).anyMatch(n -> n.startsWith("james-server-memory-app-"))
            .anyMatch(n -> n.startsWith("james-kvs-spool-"))
            .anyMatch(n -> n.startsWith("james-kvs-app-"));
        assertThat(jars).filteredOn(n -> BENCHMARK_ONLY.stream().anyMatch(n::startsWith)).isEmpty();
    }
}
