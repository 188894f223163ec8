package org.jameskvs.server;

import org.jameskvs.client.ClientTls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made by {@code bin/kvs-certs}, the script {@code bin/demo --tls} uses: a private CA,
 * a server certificate for localhost and 127.0.0.1 and a client certificate, both signed by it. Two
 * sets made separately do not trust each other (each has its own CA). Shared with other modules'
 * tests through this module's test jar.
 */
public record TestCertificates(Path dir) {

    /** Runs {@code bin/kvs-certs dir}; fails the test if it does not succeed within a minute. */
    public static TestCertificates make(Path dir) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(script().toString(), dir.toString()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("bin/kvs-certs " + dir + " failed:\n" + output);
        }
        return new TestCertificates(dir);
    }

    /** bin/kvs-certs of this checkout, found from the module directory the tests run in. */
    private static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path candidate = d.resolve("bin/kvs-certs");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("no bin/kvs-certs above " + Path.of("").toAbsolutePath());
    }

    public Path ca() {
        return dir.resolve("ca.pem");
    }

    public Path serverCert() {
        return dir.resolve("server.pem");
    }

    public Path serverKey() {
        return dir.resolve("server.key");
    }

    public Path clientCert() {
        return dir.resolve("client.pem");
    }

    public Path clientKey() {
        return dir.resolve("client.key");
    }

    /**
     * A test server (port 0, metrics off) that speaks only TLS with this server certificate and, with
     * {@code clientAuth} optional or require, accepts client certificates signed by this CA.
     */
    public ServerConfig serverConfig(Path dataDir, String password, String clientAuth) {
        Properties p = ServerConfig.testProperties(dataDir, password);
        p.setProperty("tls.enabled", "true");
        p.setProperty("tls.certChain", serverCert().toString());
        p.setProperty("tls.privateKey", serverKey().toString());
        p.setProperty("tls.clientAuth", clientAuth);
        if (!clientAuth.equals("none")) {
            p.setProperty("tls.trustCertificates", ca().toString());
        }
        return ServerConfig.fromProperties(p);
    }

    /** A client that trusts this CA (host name checked) and presents this client certificate. */
    public ClientTls clientTls() {
        return ClientTls.trusting(ca()).withClientCertificate(clientCert(), clientKey());
    }
}
