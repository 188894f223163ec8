package org.jameskvs.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.jameskvs.testkit.ChildProcess;
import org.jameskvs.testkit.FreePorts;
import org.jameskvs.testkit.KvsServerProcess;

/**
 * Starts the servers a benchmark compares, each as its own OS process on 127.0.0.1 with its own
 * temporary directory, and stops them again. Nothing is left behind.
 */
public final class ServerProcesses {
    public static final String PASSWORD = "bench";

    private ServerProcesses() {
    }

    /** A started server: its port, its metrics port (-1: none) and how to stop it. */
    public record Running(int port, int metricsPort, Process process, Path dir, AutoCloseable owner) implements AutoCloseable {
        @Override
        public void close() {
            try {
                owner.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            } finally {
                deleteTree(dir);
            }
        }
    }

    /**
     * A KVS server node (the test kit's {@link KvsServerProcess}, from this class path); {@code fsync}
     * is none, interval or batch. Its metrics endpoint lets a benchmark read its block and commit times
     * and GC pauses (ServerTimers), from another thread than the event loop's.
     */
    public static Running kvs(String fsync, String... extraConfig) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("bench-kvs");
        List<String> config = new ArrayList<>(List.of("fsync.policy=" + fsync));
        config.addAll(List.of(extraConfig));
        // e.g. KVS_SERVER_CONFIG="maintenance.intervalMillis=200" (later lines win)
        String extraEnv = System.getenv("KVS_SERVER_CONFIG");
        if (extraEnv != null && !extraEnv.isBlank()) {
            for (String line : extraEnv.split(";")) {
                config.add(line.trim());
            }
        }
        // e.g. KVS_SERVER_JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/kvs.jfr" to profile the server
        String extra = System.getenv("KVS_SERVER_JAVA_OPTS");
        List<String> jvmFlags = extra == null || extra.isBlank() ? List.of() : List.of(extra.trim().split("\\s+"));
        KvsServerProcess server = KvsServerProcess.in(dir).password(PASSWORD).metrics().jvmFlags(jvmFlags)
                .properties(config.toArray(String[]::new)).fromClassPath().start();
        return new Running(server.port(), server.metricsPort(), server.process(), dir, server);
    }

    /** A Redis server persisting as {@code persistence} says (no RDB snapshots in any mode). */
    public static Running redis(RedisPersistence persistence) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("bench-redis");
        int port = FreePorts.next();
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--dir", dir.toString(), "--daemonize", "no"));
        cmd.addAll(persistence.options());
        ChildProcess redis = ChildProcess.start("redis", cmd, dir, dir.resolve("redis.log"));
        if (!FreePorts.awaitAccepting(port, redis.process(), Duration.ofSeconds(60))) {
            String tail = redis.logTail(20);
            redis.close();
            throw new IOException("redis did not open port " + port + " within 60 s\n" + tail);
        }
        return new Running(port, -1, redis.process(), dir, redis);
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // best effort: a temp dir
        }
    }
}
