package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plug-in's tls.* keys reach every connection it makes: the single-server opener, the
 * replicated opener (both paths of every node) and the OR-set repository's log readers. The servers
 * speak only TLS and require a client certificate of their CA (bin/kvs-certs), so a connection made
 * without the settings cannot work.
 */
class PluginTlsTest {
    private static final String PASSWORD = "plugin-tls-secret";

    @TempDir
    static Path certs;
    private static TestCertificates ours;

    @TempDir
    Path dir;
    private final List<KvsServer> servers = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void makeCertificates() throws Exception {
        ours = TestCertificates.make(certs.resolve("ours"));
    }

    @BeforeEach
    void startTlsOnlyServers() {
        for (String name : List.of("node1", "node2")) {
            servers.add(KvsServer.start(ours.serverConfig(dir.resolve(name), PASSWORD, "require")));
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        servers.forEach(KvsServer::close);
    }

    /** kvs-spool.properties for these servers, with or without the client certificate. */
    private Properties settings(boolean replicated, boolean clientCertificate) {
        Properties p = new Properties();
        p.setProperty("servers", "127.0.0.1:" + servers.get(0).port());
        p.setProperty("password", PASSWORD);
        p.setProperty("requestTimeout", "5000");
        p.setProperty("tls", "true");
        p.setProperty("tls.trustCertificates", ours.ca().toString());
        if (clientCertificate) {
            p.setProperty("tls.certChain", ours.clientCert().toString());
            p.setProperty("tls.privateKey", ours.clientKey().toString());
        }
        if (replicated) {
            p.setProperty("replication.nodes", "node1,node2");
            p.setProperty("replication.node.node1.active", "127.0.0.1:" + servers.get(0).port());
            p.setProperty("replication.node.node2.active", "127.0.0.1:" + servers.get(1).port());
            p.setProperty("replication.heartbeatIntervalMillis", "200");
            p.setProperty("replication.heartbeatTimeoutMillis", "600");
        }
        return p;
    }

    private <T extends AutoCloseable> T closeLater(T closeable) {
        closeables.add(closeable);
        return closeable;
    }

    @Test
    void theSingleServerOpenerUsesTheTlsKeys() {
        KvsClientOpener opener = closeLater(KvsClientOpener.connect(KvsSpoolConfiguration.from(settings(false, true))));
        KvsQueue q = opener.open("single", OpenOptions.writer("james", 1)).join().orThrow();
        assertThat(q.put(bytes("m"), 5, 0, new byte[0], bytes("over tls")).join().isOk()).isTrue();

        assertThatThrownBy(() -> KvsClientOpener.connect(KvsSpoolConfiguration.from(settings(false, false))).close())
            .as("the same without the client certificate").isInstanceOf(KvsException.class);
    }

    @Test
    void theReplicatedOpenerAndTheOrSetLogReadersUseTheTlsKeys() throws Exception {
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(settings(true, true));
        ReplicatedKvsOpener opener = closeLater(ReplicatedKvsOpener.start(configuration));
        KvsQueue log = openOnceHeartbeatsAnswer(opener, "james/repo/log-a");
        assertThat(log.put(bytes("op-1"), 5, 0, new byte[0], bytes("add")).join().isOk()).as("two copies written").isTrue();

        // The log readers open their own connection to every node: over TLS, with the certificate.
        LogCopies copies = closeLater(new LogCopies(opener, configuration, Duration.ofMillis(100)));
        for (String node : copies.nodes()) {
            OpenResult copy = copies.open(node, "james/repo/log-a").join();
            assertThat(copy.status()).as("log copy on " + node + ": " + copy.reason()).isEqualTo(Status.OK);
        }
        // Without the client certificate the same readers are refused by every node.
        LogCopies refused = closeLater(new LogCopies(opener, KvsSpoolConfiguration.from(settings(true, false)), Duration.ofMillis(100)));
        for (String node : refused.nodes()) {
            assertThat(refused.open(node, "james/repo/log-a").join().status()).as(node).isEqualTo(Status.CONNECTION_LOST);
        }
    }

    /** A path marked NG while its TLS handshake was under way is usable after its next answered heartbeat. */
    private static KvsQueue openOnceHeartbeatsAnswer(KvsQueueOpener opener, String name) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
            r = opener.open(name, OpenOptions.writer("james", 1)).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("open failed: " + r.status() + " " + r.reason());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
