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
}
