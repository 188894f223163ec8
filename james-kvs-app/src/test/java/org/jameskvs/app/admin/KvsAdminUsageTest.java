package org.jameskvs.app.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/kvs-admin} refuses what it cannot do, with exit status 2 and a line saying why: too few
 * arguments, and a {@code kvs-spool.properties} without {@code replication.nodes} (the tool reads the
 * copies of a replicated cluster; a single-node spool has none to compare).
 */
class KvsAdminUsageTest {
    @TempDir
    Path conf;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    void tooFewArgumentsPrintTheUsage() throws Exception {
        assertThat(run(conf.toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("usage: kvs-admin CONF_DIR list");
        assertThat(out.size()).isZero();
    }

    @Test
    void aConfigurationWithoutReplicationNodesIsRefused() throws Exception {
        Files.writeString(conf.resolve("kvs-spool.properties"), "servers=127.0.0.1:7400\npassword=a-test-password\n");
        assertThat(run(conf.toString(), "list")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("kvs-spool.properties sets no replication.nodes");
        assertThat(out.size()).isZero();
    }

    private int run(String... args) throws Exception {
        return KvsAdmin.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }
}
