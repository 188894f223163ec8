package org.jameskvs.client;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.jameskvs.client.TestSupport.await;
import static org.jameskvs.client.TestSupport.bytes;

/**
 * TLS against a self-signed certificate made with the JDK's keytool (Netty's SelfSignedCertificate
 * needs BouncyCastle or JDK internals on newer JDKs).
 */
class TlsTest {
    private static final char[] PASS = "changeit".toCharArray();

    @TempDir
    static Path dir;
    private static SslContext serverContext;
    private static Path caPem;
    private static SslContext otherNameContext;

    @BeforeAll
    static void makeCertificates() throws Exception {
        serverContext = makeCertificate("good", "SAN=dns:localhost,ip:127.0.0.1");
        caPem = dir.resolve("good.pem");
        otherNameContext = makeCertificate("other", "SAN=dns:other.example");
    }

    /** A self-signed server certificate; its PEM is written next to it to be trusted as a CA. */
    private static SslContext makeCertificate(String name, String san) throws Exception {
        Path keystore = dir.resolve(name + ".p12");
        keytool("-genkeypair", "-alias", "kvs", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=" + name, "-ext", san,
                "-keystore", keystore.toString(), "-storetype", "PKCS12", "-storepass", "changeit", "-keypass", "changeit");
        keytool("-exportcert", "-rfc", "-alias", "kvs", "-keystore", keystore.toString(), "-storetype", "PKCS12",
                "-storepass", "changeit", "-file", dir.resolve(name + ".pem").toString());
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, PASS);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASS);
        return SslContextBuilder.forServer(kmf).build();
    }

    private static void keytool(String... args) throws Exception {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> command = new java.util.ArrayList<>();
        command.add(keytool.toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
    }

    @Test
    void trustsThePemCaAndVerifiesTheHostName() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p", serverContext);
             KvsClient client = KvsClient.connect(server.config().tlsTrustCertificates(caPem).build())) {
            assertThat(await(client.ping()).isOk()).isTrue();
            KvsQueue q = await(client.open("spool", OpenOptions.writer("n", 1))).orThrow();
            assertThat(await(q.put(bytes("a"), 0, 0, null, new byte[100_000])).isOk()).isTrue();
            assertThat(await(q.get(bytes("a"))).message().body()).hasSize(100_000);
        }
    }

    @Test
    void trustAllForTests() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p", serverContext);
             KvsClient client = KvsClient.connect(server.config().tlsTrustAll(true).build())) {
            assertThat(await(client.ping()).isOk()).isTrue();
        }
    }

    @Test
    void untrustedCertificateFailsTheConnect() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p", serverContext)) {
            assertThatThrownBy(() -> KvsClient.connect(server.config().tls(true)
                    .connectTimeout(Duration.ofSeconds(2)).build()))
                    .isInstanceOf(KvsException.class)
                    .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(Status.CONNECTION_LOST))
                    .hasMessageContaining("TLS");
        }
    }

    @Test
    void hostNameMismatchFailsTheConnect() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p", otherNameContext)) {
            Path otherPem = dir.resolve("other.pem");
            assertThatThrownBy(() -> KvsClient.connect(server.config().tlsTrustCertificates(otherPem).build()))
                    .isInstanceOf(KvsException.class)
                    .hasMessageContaining("TLS");
            // The same certificate without the name check is accepted: the name was the only problem.
            try (KvsClient client = KvsClient.connect(server.config().tlsTrustCertificates(otherPem)
                    .tlsVerifyHostname(false).build())) {
                assertThat(await(client.ping()).isOk()).isTrue();
            }
        }
    }
}
