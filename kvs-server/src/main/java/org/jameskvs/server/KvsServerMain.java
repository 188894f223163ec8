package org.jameskvs.server;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java ... org.jameskvs.server.KvsServerMain [config-file]}: starts the server and runs until
 * SIGTERM/SIGINT, then shuts down gracefully. Without a file, settings come from {@code kvs.*}
 * system properties and the defaults listed in {@link ServerConfig}. A refused configuration (e.g. a
 * sample password on a non-loopback address) ends the process with exit code 2 and one line naming
 * the key.
 */
public final class KvsServerMain {
    private KvsServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        noAnalytics();
        hotPathDefaults();
        ServerConfig config;
        try {
            config = args.length > 0 ? ServerConfig.load(Path.of(args[0]))
                    : ServerConfig.fromProperties(new java.util.Properties());
        } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
            // A configuration mistake is the operator's to fix: one line saying which key, no stack trace.
            System.err.println("kvs-server: configuration refused: " + e.getMessage());
            System.exit(2);
            return;
        }
        org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(KvsServerMain.class);
        log.info("starting with {}", config);
        KvsServer server;
        try {
            server = KvsServer.start(config);
        } catch (RuntimeException e) {
            // Exit rather than linger: threads the failed start left behind would keep the JVM up.
            log.error("cannot start", e);
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "kvs-shutdown"));
        stopped.await();
    }

    /**
     * Per-access safety checks that cost a measurable share of the hot path and buy nothing here:
     * the store is confined to one thread by design (Chronicle's single-threaded check), and every
     * buffer access is bounds-checked by our own field readers first (Netty's accessibility and
     * bounds checks). Set before those libraries load; an explicit -D on the command line wins.
     */
    static void hotPathDefaults() {
        defaultProperty("disable.single.threaded.check", "true");
        defaultProperty("io.netty.buffer.checkAccessible", "false");
        defaultProperty("io.netty.buffer.checkBounds", "false");
    }

    /**
     * Chronicle's usage analytics off, so that a server started without the command-line flag (java -jar
     * kvs-server.jar) sends nothing anywhere but to its clients. Set before Chronicle loads.
     */
    static void noAnalytics() {
        defaultProperty("chronicle.analytics.disable", "true");
    }

    private static void defaultProperty(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
