package org.jameskvs.server;

import org.jameskvs.server.storage.FsyncPolicy;
import org.jameskvs.server.storage.JournalTuning;
import org.jameskvs.server.storage.StoreConfig;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * Every setting of the KVS server, in one place. Read from a properties file; any key can be
 * overridden by a system property of the same name prefixed with {@code kvs.} (e.g.
 * {@code -Dkvs.listen.port=7401}).
 *
 * <pre>
 * key                        default        meaning
 * listen.host                127.0.0.1      address the protocol port binds to
 * listen.port                7400           protocol port (0 = any free port)
 * data.dir                   ./kvs-data     journal directory
 * auth.user                  james          the one account clients authenticate as
 * auth.password              (none)         its password; required (or auth.passwordFile); a sample or
 *                                           obvious one (changeme, password, the user name, ...) only
 *                                           with listen.host on loopback
 * auth.passwordFile          (none)         file whose first line is the password
 * tls.enabled                false          serve the protocol over TLS (only: a plain-TCP client is refused)
 * tls.certChain              (none)         PEM certificate chain (required with TLS)
 * tls.privateKey             (none)         PEM PKCS#8 private key (required with TLS)
 * tls.clientAuth             none           none | optional | require: client certificates (mutual TLS);
 *                                           optional checks one if the client presents it, require
 *                                           refuses a client without one
 * tls.trustCertificates      (none)         PEM file of the CAs whose client certificates are accepted
 *                                           (required with tls.clientAuth optional or require)
 * frame.maxBytes             67108864       largest request frame accepted (64 MiB); larger: FRAME_TOO_LARGE.
 *                                           A PUT of that size is also stored: the journal's block
 *                                           grows with it (see journalBlockBytesFor)
 * fsync.policy               none           none | interval | batch; see QueueStore's crash contract
 * fsync.intervalMillis       100            for fsync.policy=interval
 * disk.minFreeBytes          67108864       PUTs answer DISK_FULL below this free space (64 MiB); other
 *                                           writes (DELETE, REPLACE, ...) down to half of it, so a full store drains
 * journal.maxBytes           0              PUTs answer DISK_FULL past this journal size (0 = no limit);
 *                                           other writes up to an eighth more
 * queue.defaultMaxMessages   10000000       per-queue message limit when OPEN says 0
 * queue.defaultMaxBytes      8589934592     per-queue body-bytes limit when OPEN says 0 (8 GiB)
 * maintenance.intervalMillis 1000           how often compaction / file deletion / interval fsync run
 * metrics.enabled            true           serve Prometheus metrics over HTTP
 * metrics.host               127.0.0.1      metrics bind address
 * metrics.port               9464           metrics port (0 = any free port); path /metrics
 * shutdown.graceMillis       5000           on SIGTERM, how long in-flight requests get to finish
 * </pre>
 */
public record ServerConfig(String listenHost, int listenPort, Path dataDir, String user, String password,
                           boolean tlsEnabled, Path tlsCertChain, Path tlsPrivateKey, ClientAuth tlsClientAuth,
                           Path tlsTrustCertificates, int maxFrameBytes,
                           FsyncPolicy fsyncPolicy, long fsyncIntervalMillis, long minFreeDiskBytes,
                           long maxJournalBytes, long defaultMaxMessages, long defaultMaxBytes,
                           long maintenanceIntervalMillis, boolean metricsEnabled, String metricsHost,
                           int metricsPort, long shutdownGraceMillis) {

    public ServerConfig {
        ListenPassword.check(password, user, listenHost);
        if (tlsEnabled && (tlsCertChain == null || tlsPrivateKey == null)) {
            throw new IllegalArgumentException("tls.enabled=true needs tls.certChain and tls.privateKey");
        }
        if (tlsClientAuth != ClientAuth.NONE && !tlsEnabled) {
            throw new IllegalArgumentException("tls.clientAuth=" + tlsClientAuth.key() + " needs tls.enabled=true");
        }
        if (tlsClientAuth != ClientAuth.NONE && tlsTrustCertificates == null) {
            throw new IllegalArgumentException("tls.clientAuth=" + tlsClientAuth.key()
                    + " needs tls.trustCertificates (PEM of the CAs that sign client certificates)");
        }
        if (tlsClientAuth == ClientAuth.NONE && tlsTrustCertificates != null) {
            throw new IllegalArgumentException("tls.trustCertificates is set but tls.clientAuth=none would ignore it:"
                    + " set tls.clientAuth=optional or require (or remove tls.trustCertificates)");
        }
        if (maxFrameBytes < 1024) {
            throw new IllegalArgumentException("frame.maxBytes must be at least 1024");
        }
    }

    public static ServerConfig load(Path file) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read config " + file, e);
        }
        return fromProperties(p);
    }

    /** Builds a config from properties, applying {@code kvs.}-prefixed system property overrides. */
    public static ServerConfig fromProperties(Properties file) {
        Properties p = new Properties();
        p.putAll(file);
        System.getProperties().forEach((k, v) -> {
            String key = k.toString();
            if (key.startsWith("kvs.")) {
                p.setProperty(key.substring(4), v.toString());
            }
        });
        String password = p.getProperty("auth.password");
        String passwordFile = p.getProperty("auth.passwordFile");
        if ((password == null || password.isEmpty()) && passwordFile != null) {
            try {
                password = Files.readAllLines(Path.of(passwordFile)).get(0).trim();
            } catch (IOException | IndexOutOfBoundsException e) {
                throw new IllegalArgumentException("cannot read auth.passwordFile " + passwordFile, e);
            }
        }
        return new ServerConfig(
                p.getProperty("listen.host", "127.0.0.1"),
                Integer.parseInt(p.getProperty("listen.port", "7400")),
                Path.of(p.getProperty("data.dir", "./kvs-data")),
                p.getProperty("auth.user", "james"),
                password,
                Boolean.parseBoolean(p.getProperty("tls.enabled", "false")),
                pathOrNull(p.getProperty("tls.certChain")),
                pathOrNull(p.getProperty("tls.privateKey")),
                ClientAuth.of(p.getProperty("tls.clientAuth", "none")),
                pathOrNull(p.getProperty("tls.trustCertificates")),
                Integer.parseInt(p.getProperty("frame.maxBytes", "67108864")),
                FsyncPolicy.valueOf(p.getProperty("fsync.policy", "none").toUpperCase(Locale.ROOT)),
                Long.parseLong(p.getProperty("fsync.intervalMillis", "100")),
                Long.parseLong(p.getProperty("disk.minFreeBytes", "67108864")),
                Long.parseLong(p.getProperty("journal.maxBytes", "0")),
                Long.parseLong(p.getProperty("queue.defaultMaxMessages", "10000000")),
                Long.parseLong(p.getProperty("queue.defaultMaxBytes", "8589934592")),
                Long.parseLong(p.getProperty("maintenance.intervalMillis", "1000")),
                Boolean.parseBoolean(p.getProperty("metrics.enabled", "true")),
                p.getProperty("metrics.host", "127.0.0.1"),
                Integer.parseInt(p.getProperty("metrics.port", "9464")),
                Long.parseLong(p.getProperty("shutdown.graceMillis", "5000")));
    }

    /** Defaults for tests and embedding: port 0, metrics off, the given data dir and password. */
    public static ServerConfig forTest(Path dataDir, String password) {
        return fromProperties(testProperties(dataDir, password));
    }

    /**
     * The properties behind {@link #forTest}, for a test that adds or changes some first: any free
     * port, metrics off, no free-disk floor, the given folder and password.
     */
    public static Properties testProperties(Path dataDir, String password) {
        Properties p = new Properties();
        p.setProperty("listen.port", "0");
        p.setProperty("data.dir", dataDir.toString());
        p.setProperty("auth.password", password);
        p.setProperty("metrics.enabled", "false");
        p.setProperty("disk.minFreeBytes", "0");
        return p;
    }

    public StoreConfig storeConfig() {
        JournalTuning defaults = JournalTuning.defaults();
        return new StoreConfig(dataDir, fsyncPolicy, fsyncIntervalMillis, minFreeDiskBytes, maxJournalBytes,
                defaultMaxMessages, defaultMaxBytes,
                defaults.withBlockSize(Math.max(defaults.blockSize(), journalBlockBytesFor(maxFrameBytes))));
    }

    /**
     * The journal block size that stores a PUT of the largest accepted frame: a journal record (the
     * frame's fields plus a record header) goes into one Chronicle document, and Chronicle takes a
     * document of at most a quarter of its block. Rounded up to whole MiB; 64 KiB of room for the
     * record and block headers.
     */
    static long journalBlockBytesFor(int maxFrameBytes) {
        long need = 4 * ((long) maxFrameBytes + (64 << 10));
        return (need + (1 << 20) - 1) & -(1L << 20);
    }

    public ServerConfig withListenPort(int port) {
        return new ServerConfig(listenHost, port, dataDir, user, password, tlsEnabled, tlsCertChain, tlsPrivateKey,
                tlsClientAuth, tlsTrustCertificates, maxFrameBytes, fsyncPolicy, fsyncIntervalMillis, minFreeDiskBytes, maxJournalBytes, defaultMaxMessages,
                defaultMaxBytes, maintenanceIntervalMillis, metricsEnabled, metricsHost, metricsPort,
                shutdownGraceMillis);
    }

    /** Whether the server asks TLS clients for a certificate (mutual TLS): {@code tls.clientAuth}. */
    public enum ClientAuth {
        NONE, OPTIONAL, REQUIRE;

        static ClientAuth of(String value) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("tls.clientAuth must be none, optional or require, was '" + value + "'");
            }
        }

        String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static Path pathOrNull(String s) {
        return s == null || s.isBlank() ? null : Path.of(s);
    }

    /** Never prints the password. */
    @Override
    public String toString() {
        return "ServerConfig{listen=" + listenHost + ":" + listenPort + ", dataDir=" + dataDir + ", user=" + user
                + ", password=***, tls=" + tlsEnabled
                + (tlsEnabled ? ", clientAuth=" + tlsClientAuth.key() : "") + ", maxFrameBytes=" + maxFrameBytes + ", fsync=" + fsyncPolicy
                + (fsyncPolicy == FsyncPolicy.INTERVAL ? "/" + fsyncIntervalMillis + "ms" : "")
                + ", minFreeDiskBytes=" + minFreeDiskBytes + ", maxJournalBytes=" + maxJournalBytes
                + ", metrics=" + (metricsEnabled ? metricsHost + ":" + metricsPort : "off") + "}";
    }
}
