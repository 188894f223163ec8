package org.jameskvs.server;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The client library against the real server, over real sockets (plain and TLS). */
class ClientServerIntegrationTest {
    private static final String PASSWORD = "integration";
    @TempDir
    Path dir;

    private static KvsClientConfig.Builder client(int port) {
        return KvsClientConfig.builder().host("127.0.0.1").port(port).credentials("james", PASSWORD)
                .requestTimeout(Duration.ofSeconds(10)).reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void pipelinedPutsAreAppliedInOrderWithOneTransactionEach() {
        try (KvsServer server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
             KvsClient c = KvsClient.connect(client(server.port()).maxPending(32_768).build())) {
            KvsQueue q = c.open("spool", OpenOptions.writer("node-a", 1)).join().orThrow();
            int n = 20_000;
            List<CompletableFuture<Ack>> acks = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                acks.add(q.put(b("m" + i), 5, 0, new byte[0], b("body-" + i)));
            }
            long previousTxn = -1;
            long previousPosition = -1;
            for (CompletableFuture<Ack> f : acks) {
                Ack a = f.join();
                assertThat(a.status()).isEqualTo(Status.OK);
                if (previousTxn >= 0) {
                    assertThat(a.txn()).isEqualTo(previousTxn + 1);
                    assertThat(a.value()).isGreaterThan(previousPosition);
                }
                previousTxn = a.txn();
                previousPosition = a.value();
            }
            long from = 0;
            int seen = 0;
            while (true) {
                ReadResult r = q.read(from, 1000, 1 << 20, 0).join();
                assertThat(r.isOk()).isTrue();
                if (r.messages().isEmpty()) {
                    break;
                }
                for (StoredMessage m : r.messages()) {
                    assertThat(new String(m.id(), StandardCharsets.UTF_8)).isEqualTo("m" + seen++);
                }
                from = r.nextPosition();
            }
            assertThat(seen).isEqualTo(n);
            QueueStat stat = q.stat().join();
            assertThat(stat.size()).isEqualTo(n);
            assertThat(stat.owner()).isEqualTo("node-a");
        }
    }

    @Test
    void clientReconnectsAndReopensAfterAServerRestartAndNothingAcknowledgedIsLost() throws Exception {
        KvsServer server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
        int port = server.port();
        try (KvsClient c = KvsClient.connect(client(port).build())) {
            KvsQueue q = c.open("spool", OpenOptions.writer("node-a", 1)).join().orThrow();
            assertThat(q.put(b("before"), 5, 0, new byte[0], b("x")).join().isOk()).isTrue();
            server.close();
            Ack whileDown = q.put(b("down"), 5, 0, new byte[0], b("x")).join();
            assertThat(whileDown.status()).isIn(Status.CONNECTION_LOST, Status.TIMEOUT);
            server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD).withListenPort(port));
            Ack after = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                after = q.put(b("after"), 5, 0, new byte[0], b("y")).join();
                if (after.isOk()) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(after).isNotNull();
            assertThat(after.status()).isEqualTo(Status.OK);
            assertThat(q.get(b("before")).join().isOk()).isTrue();
            assertThat(q.get(b("down")).join().status()).isEqualTo(Status.NOT_FOUND);
        } finally {
            server.close();
        }
    }

    @Test
    void wrongPasswordIsRefusedAtConnect() {
        try (KvsServer server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD))) {
            assertThatThrownBy(() -> KvsClient.connect(client(server.port()).credentials("james", "nope").build()))
                    .isInstanceOf(KvsException.class)
                    .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(Status.AUTH_FAILED));
        }
    }

    @Test
    void tlsEndToEndAndAPlainClientCannotTalkToATlsServer() throws Exception {
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                key.toString(), "-out", cert.toString(), "-days", "2", "-subj", "/CN=localhost", "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1").redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes())).isZero();
        Properties props = new Properties();
        props.setProperty("listen.port", "0");
        props.setProperty("data.dir", dir.resolve("data").toString());
        props.setProperty("auth.password", PASSWORD);
        props.setProperty("metrics.enabled", "false");
        props.setProperty("disk.minFreeBytes", "0");
        props.setProperty("tls.enabled", "true");
        props.setProperty("tls.certChain", cert.toString());
        props.setProperty("tls.privateKey", key.toString());
        try (KvsServer server = KvsServer.start(ServerConfig.fromProperties(props))) {
            try (KvsClient c = KvsClient.connect(client(server.port()).tls(true).tlsTrustCertificates(cert).build())) {
                KvsQueue q = c.open("secure", OpenOptions.writer("n", 1)).join().orThrow();
                assertThat(q.put(b("t"), 5, 0, new byte[0], b("over tls")).join().isOk()).isTrue();
                assertThat(q.get(b("t")).join().message().body()).isEqualTo(b("over tls"));
            }
            assertThatThrownBy(() -> KvsClient.connect(client(server.port())
                    .connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(2)).build()))
                    .isInstanceOf(KvsException.class);
            // The server is still fine after the plain-text attempt.
            try (KvsClient c = KvsClient.connect(client(server.port()).tls(true).tlsTrustCertificates(cert).build())) {
                assertThat(c.ping().join().isOk()).isTrue();
            }
        }
    }

    @Test
    void prometheusEndpointShowsOperationsQueueSizesAndConnections() throws Exception {
        Properties props = ServerConfig.testProperties(dir, PASSWORD);
        props.setProperty("metrics.enabled", "true");
        props.setProperty("metrics.port", "0");
        try (KvsServer server = KvsServer.start(ServerConfig.fromProperties(props));
             KvsClient c = KvsClient.connect(client(server.port()).build())) {
            KvsQueue q = c.open("metered", OpenOptions.writer("n", 1)).join().orThrow();
            for (int i = 0; i < 25; i++) {
                q.put(b("m" + i), 5, 0, new byte[0], b("0123456789")).join();
            }
            q.put(b("m0"), 5, 0, new byte[0], b("dup")).join();
            String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.metricsPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(body).contains("kvs_requests_total{op=\"PUT\"} 26.0");
            assertThat(body).contains("kvs_errors_total{status=\"DUPLICATE_ID\"} 1.0");
            assertThat(body).contains("kvs_queue_size{queue=\"metered\"} 25.0");
            assertThat(body).contains("kvs_queue_bytes{queue=\"metered\"} 250.0");
            assertThat(body).contains("kvs_connections 1.0");
            assertThat(body).contains("kvs_journal_bytes");
            assertThat(body).contains("kvs_block_seconds_bucket");
            Files.writeString(dir.resolve("scrape.txt"), body);
        }
    }
}
