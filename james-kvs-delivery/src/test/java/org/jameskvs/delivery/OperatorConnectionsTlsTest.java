package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jameskvs.app.admin.KvsAdmin;
import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.server.TestCertificates;
import org.jameskvs.testkit.KvsServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two KVS connections outside the spool's own also take the plug-in's {@code tls.*} keys: the
 * lane limits shared across James nodes ({@link KvsSharedLimits}, a connection of its own to the first
 * node) and {@code bin/kvs-admin} (a connection per node). The nodes are real server processes that
 * speak only TLS and require a client certificate of their CA, so a connection made without the keys
 * cannot work; the same calls without the client certificate must fail.
 */
class OperatorConnectionsTlsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;
    private static TestCertificates certs;
    private static final List<KvsServerProcess> nodes = new ArrayList<>();

    @BeforeAll
    static void startTlsOnlyNodes() throws Exception {
        certs = TestCertificates.make(dir.resolve("certs"));
        for (String name : List.of("node1", "node2")) {
            nodes.add(KvsServerProcess.in(dir.resolve(name)).name(name).properties(
                "tls.enabled=true",
                "tls.certChain=" + certs.serverCert(),
                "tls.privateKey=" + certs.serverKey(),
                "tls.clientAuth=require",
                "tls.trustCertificates=" + certs.ca()).start());
        }
    }

    @AfterAll
    static void stopNodes() throws Exception {
        for (KvsServerProcess node : nodes) {
            node.close();
        }
    }

    /** A James conf/ folder whose kvs-spool.properties names the two nodes, over TLS. */
    private static Path conf(String name, boolean clientCertificate) throws Exception {
        List<String> lines = new ArrayList<>(List.of(
            "nodeId=" + name,
            "password=" + KvsServerProcess.PASSWORD,
            "requestTimeout=5000",
            "tls=true",
            "tls.trustCertificates=" + certs.ca(),
            "replication.nodes=node1,node2",
            "replication.node.node1.active=127.0.0.1:" + nodes.get(0).port(),
            "replication.node.node2.active=127.0.0.1:" + nodes.get(1).port()));
        if (clientCertificate) {
            lines.add("tls.certChain=" + certs.clientCert());
            lines.add("tls.privateKey=" + certs.clientKey());
        }
        Path conf = Files.createDirectories(dir.resolve(name));
        Files.write(conf.resolve(KvsSpoolConfiguration.FILE_NAME), lines);
        return conf;
    }

    @Test
    void theSharedLaneLimitsConnectOverTls() throws Exception {
        LaneDeliveryConfig lanes = TestConfigs.config("sharedLimitsRefreshMillis", "200");
        try (KvsSharedLimits a = KvsSharedLimits.connect(KvsSpoolConfiguration.load(conf("node-a", true)), lanes);
             KvsSharedLimits b = KvsSharedLimits.connect(KvsSpoolConfiguration.load(conf("node-b", true)), lanes)) {
            until(() -> a.rateShare() == 0.5 && b.rateShare() == 0.5 ? true : null,
                "each node sees the other's member lock, read over TLS");
        }

        KvsSpoolConfiguration noCertificate = KvsSpoolConfiguration.load(conf("limits-no-cert", false));
        assertThatThrownBy(() -> KvsSharedLimits.connect(noCertificate, lanes).close())
            .as("the same without the client certificate").isInstanceOf(KvsException.class);
    }

    @Test
    void kvsAdminListsTheNodesOverTls() throws Exception {
        Path withCertificate = conf("admin", true);
        try (ReplicatedKvsOpener spool = ReplicatedKvsOpener.start(KvsSpoolConfiguration.load(withCertificate))) {
            // The first open may come before the paths' first answered heartbeat (TLS handshakes).
            KvsQueue q = until(() -> {
                OpenResult r = spool.open("admin-probe", OpenOptions.writer("admin", 1)).join();
                return r.isOk() ? r.queue() : null;
            }, "the probe queue opened on both nodes");
            assertThat(q.put("m".getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0], new byte[] {1}).join().isOk()).isTrue();
        }
        String listed = admin(withCertificate, "list", "admin-probe");
        assertThat(listed).as("kvs-admin list").doesNotContain("(unreachable)");
        assertThat(listed.lines().filter(l -> l.startsWith("admin-probe ")).map(l -> l.split("\\s+")[1]).toList())
            .as("the probe queue read from each node over TLS:\n" + listed).contains("node1", "node2");

        String refused = admin(conf("admin-no-cert", false), "list");
        assertThat(refused.lines().filter(l -> l.contains("(unreachable)")).count())
            .as("without the client certificate every node is unreachable:\n" + refused).isEqualTo(2);
    }

    /** The first non-null value of {@code attempt}, polled until {@link #TIMEOUT}. */
    private static <T> T until(java.util.function.Supplier<T> attempt, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        for (T value = attempt.get(); ; value = attempt.get()) {
            if (value != null) {
                return value;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + TIMEOUT + ": " + what);
            }
            Thread.sleep(50);
        }
    }

    private static String admin(Path conf, String... command) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] args = new String[command.length + 1];
        args[0] = conf.toString();
        System.arraycopy(command, 0, args, 1, command.length);
        int status = KvsAdmin.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(status).as("kvs-admin exit status; stderr: " + err.toString(StandardCharsets.UTF_8)).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }
}
