package org.jameskvs.server;

import org.jameskvs.client.ClientTls;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsException;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Client certificates (tls.clientAuth) against a real server, certificates made by bin/kvs-certs. */
class MutualTlsTest {
    private static final String PASSWORD = "mtls-secret";

    @TempDir
    static Path certs;
    @TempDir
    Path dir;
    private static TestCertificates ours;
    private static TestCertificates strangers;

    @BeforeAll
    static void makeCertificates() throws Exception {
        ours = TestCertificates.make(certs.resolve("ours"));
        strangers = TestCertificates.make(certs.resolve("strangers"));
    }

    private static KvsClientConfig client(int port, ClientTls tls) {
        return KvsClientConfig.builder().host("127.0.0.1").port(port).credentials("james", PASSWORD).tls(tls)
                .connectTimeout(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(5)).build();
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void requireAcceptsOnlyClientsWithACertificateOfTheTrustedCa() throws Exception {
        try (KvsServer server = KvsServer.start(ours.serverConfig(dir, PASSWORD, "require"))) {
            try (KvsClient c = KvsClient.connect(client(server.port(), ours.clientTls()))) {
                KvsQueue q = c.open("mtls", OpenOptions.writer("n", 1)).join().orThrow();
                assertThat(q.put(b("m"), 5, 0, new byte[0], b("mutual")).join().isOk()).isTrue();
                assertThat(q.get(b("m")).join().message().body()).isEqualTo(b("mutual"));
            }
            ClientTls noCertificate = ClientTls.trusting(ours.ca());
            ClientTls untrusted = ClientTls.trusting(ours.ca())
                    .withClientCertificate(strangers.clientCert(), strangers.clientKey());
            for (ClientTls refused : new ClientTls[]{ClientTls.OFF, noCertificate, untrusted}) {
                assertThatThrownBy(() -> KvsClient.connect(client(server.port(), refused)).close()).as(refused.toString())
                        .isInstanceOf(KvsException.class);
            }
            // Refusing them ended only their connections.
            try (KvsClient c = KvsClient.connect(client(server.port(), ours.clientTls()))) {
                assertThat(c.ping().join().isOk()).isTrue();
            }
        }
    }

    @Test
    void optionalAcceptsClientsWithAndWithoutACertificate() throws Exception {
        try (KvsServer server = KvsServer.start(ours.serverConfig(dir, PASSWORD, "optional"))) {
            try (KvsClient c = KvsClient.connect(client(server.port(), ClientTls.trusting(ours.ca())))) {
                assertThat(c.ping().join().isOk()).isTrue();
            }
            try (KvsClient c = KvsClient.connect(client(server.port(), ours.clientTls()))) {
                assertThat(c.ping().join().isOk()).isTrue();
            }
        }
    }

    @Test
    void aClientThatDoesNotTrustTheServersCaIsRefusedByItself() throws Exception {
        try (KvsServer server = KvsServer.start(ours.serverConfig(dir, PASSWORD, "none"))) {
            assertThatThrownBy(() -> KvsClient.connect(client(server.port(), ClientTls.trusting(strangers.ca()))).close())
                    .isInstanceOf(KvsException.class)
                    .hasMessageContaining("TLS");
        }
    }

    @Test
    void clientAuthSettingsThatCannotWorkAreRefusedNamingTheKey() {
        Properties p = new Properties();
        p.setProperty("auth.password", PASSWORD);
        p.setProperty("tls.clientAuth", "require");
        assertThatThrownBy(() -> ServerConfig.fromProperties(p)).hasMessageContaining("tls.enabled");
        p.setProperty("tls.enabled", "true");
        p.setProperty("tls.certChain", ours.serverCert().toString());
        p.setProperty("tls.privateKey", ours.serverKey().toString());
        assertThatThrownBy(() -> ServerConfig.fromProperties(p)).hasMessageContaining("tls.trustCertificates");
        p.setProperty("tls.clientAuth", "sometimes");
        assertThatThrownBy(() -> ServerConfig.fromProperties(p)).hasMessageContaining("tls.clientAuth");
        p.setProperty("tls.clientAuth", "none");
        p.setProperty("tls.trustCertificates", ours.ca().toString());
        assertThatThrownBy(() -> ServerConfig.fromProperties(p)).hasMessageContaining("tls.clientAuth");
    }
}
