package org.jameskvs.server;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java ... org.jameskvs.server.KvsServerMain [config-file]}: starts the server and runs until
 * SIGTERM/SIGINT, then shuts down gracefully. Without a file, settings come from {@code kvs.*}
 * system properties and the defaults listed in {@link ServerConfig}.
 */
public final class KvsServerMain {
    private KvsServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        noAnalytics();
        hotPathDefaults();
        ServerConfig config = args.length > 0 ? ServerConfig.load(Path.of(args[0]))
                : ServerConfig.fromProperties(new java.util.Properties());
        org.slf4j.LoggerFactory.getLogger(KvsServerMain.class).info("starting with {}", config);
        KvsServer server = KvsServer.start(config);
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
