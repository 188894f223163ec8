package org.jameskvs.replication;

import org.jameskvs.testkit.FreezableProxy;
import org.jameskvs.client.Ack;
import org.jameskvs.client.ClientTls;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two copies over TLS with client certificates: two real in-process servers that speak only TLS and
 * require a client certificate of their CA (certificates by bin/kvs-certs), each reached through two
 * relays (its active and its standby path) that record the first byte every client sent.
 */
class ReplicationTlsTest {
    private static final String PASSWORD = "tls-replication-secret";
    private static final String Q = "tls.spool";
    private static final int TLS_HANDSHAKE_RECORD = 0x16;

    @TempDir
    static Path certs;
    private static TestCertificates ours;
    private static TestCertificates strangers;

    @TempDir
    Path dir;
    private final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private final List<FreezableProxy> paths = new ArrayList<>();
    private ReplicationConfig config;
    private ReplicatedQueueOpener opener;

    @BeforeAll
    static void makeCertificates() throws Exception {
        ours = TestCertificates.make(certs.resolve("ours"));
        strangers = TestCertificates.make(certs.resolve("strangers"));
    }

    @BeforeEach
    void startTlsOnlyServers() throws Exception {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (String name : List.of("kvs1", "kvs2")) {
            KvsServer server = KvsServer.start(ours.serverConfig(dir.resolve(name), PASSWORD, "require"));
            servers.put(name, server);
            FreezableProxy active = new FreezableProxy(server.port());
            FreezableProxy standby = new FreezableProxy(server.port());
            paths.add(active);
            paths.add(standby);
            specs.add(new ReplicationConfig.NodeSpec(name, "127.0.0.1", active.port(), "127.0.0.1", standby.port()));
        }
        config = ReplicationConfig.of(specs, "james", PASSWORD)
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(600), Duration.ofMillis(1000));
    }

    @AfterEach
    void stop() {
        if (opener != null) {
            opener.close();
        }
        paths.forEach(FreezableProxy::close);
        servers.values().forEach(KvsServer::close);
    }

    @Test
    void twoCopiesOverTlsOnBothPathsOfEveryNode() throws Exception {
        opener = ReplicatedQueueOpener.start(config, ours.clientTls());
        assertThat(opener.awaitConnected(2, Duration.ofSeconds(30))).as("both nodes connected over TLS").isTrue();
        KvsQueue q = openOnceHeartbeatsAnswer();
        List<String> ids = new ArrayList<>();
        List<CompletableFuture<Ack>> puts = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            ids.add("m" + i);
            puts.add(q.put(bytes("m" + i), 5, 0, new byte[0], bytes("body " + i)));
        }
        for (CompletableFuture<Ack> put : puts) {
            Ack ack = put.join();
            assertThat(ack.isOk()).as("put: %s %s", ack.status(), ack.reason()).isTrue();
        }
        // Replicated: each of the two nodes holds all 100 (read directly, over TLS with the certificate).
        for (KvsServer server : servers.values()) {
            try (KvsClient direct = KvsClient.connect(client(server.port(), ours.clientTls()))) {
                KvsQueue copy = direct.open(Q, OpenOptions.reader()).join().orThrow();
                ReadResult all = copy.read(0, 1000, 1 << 20, 0).join();
                assertThat(all.isOk()).isTrue();
                assertThat(all.messages().stream().filter(m -> !Ids.isReserved(m.id()))
                        .map(m -> new String(m.id(), StandardCharsets.UTF_8)))
                        .containsExactlyElementsOf(ids);
            }
        }
        // Every path of every node was used, and every connection on it began with a TLS handshake.
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (paths.stream().anyMatch(p -> p.firstClientBytes().isEmpty()) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        for (FreezableProxy path : paths) {
            assertThat(path.firstClientBytes()).as("connections on the path to port " + path.port())
                    .isNotEmpty().allMatch(b -> b == TLS_HANDSHAKE_RECORD);
        }
    }

    @Test
    void withoutTlsTheSameOpenerCannotWriteToTheseServers() throws Exception {
        opener = ReplicatedQueueOpener.start(config);
        assertThat(opener.awaitConnected(1, Duration.ofSeconds(3))).as("a plain-TCP node connection").isFalse();
        OpenResult opened = opener.open(Q, OpenOptions.writer("james-plain", 1)).join();
        assertThat(opened.isOk()).isFalse();
    }

    @Test
    void plainAndUntrustedClientsAreRefused() {
        int port = servers.get("kvs1").port();
        ClientTls untrusted = ClientTls.trusting(ours.ca()).withClientCertificate(strangers.clientCert(), strangers.clientKey());
        for (ClientTls refused : new ClientTls[]{ClientTls.OFF, untrusted}) {
            assertThatThrownBy(() -> KvsClient.connect(client(port, refused)).close()).as(refused.toString())
                    .isInstanceOf(KvsException.class);
        }
    }

    /**
     * Connected is not yet usable: a path marked NG while its TLS handshake was under way is READY
     * again only after its next answered heartbeat. Retries, bounded, as a starting James would.
     */
    private KvsQueue openOnceHeartbeatsAnswer() throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
            r = opener.open(Q, OpenOptions.writer("james-tls", 1)).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("open failed: " + r.status() + " " + r.reason());
    }

    private static KvsClientConfig client(int port, ClientTls tls) {
        return KvsClientConfig.builder().host("127.0.0.1").port(port).credentials("james", PASSWORD).tls(tls)
                .connectTimeout(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(10)).build();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
