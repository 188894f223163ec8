package org.jameskvs.bench;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jameskvs.server.ChronicleJvmFlags;

/**
 * Starts the servers a benchmark compares, each as its own OS process on 127.0.0.1 with its own
 * temporary directory, and stops them again. Nothing is left behind.
 */
public final class ServerProcesses {
    public static final String PASSWORD = "bench";

    private ServerProcesses() {
    }

    /** A started server: its port, its metrics port (-1: none) and how to stop it. */
    public record Running(int port, int metricsPort, Process process, Path dir) implements AutoCloseable {
        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            deleteTree(dir);
        }
    }

    /** A KVS server node; {@code fsync} is none, interval or batch. */
    public static Running kvs(String fsync, String... extraConfig) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("bench-kvs");
        int port = freePort();
        // The server records its meters either way; the endpoint lets a benchmark read its block and
        // commit times and GC pauses (ServerTimers), from another thread than the event loop's.
        int metricsPort = freePort();
        Path conf = dir.resolve("kvs.properties");
        StringBuilder sb = new StringBuilder("listen.port=" + port + "\ndata.dir=" + dir.resolve("data")
                + "\nauth.password=" + PASSWORD + "\nmetrics.enabled=true\nmetrics.port=" + metricsPort
                + "\nfsync.policy=" + fsync + "\n");
        for (String line : extraConfig) {
            sb.append(line).append('\n');
        }
        // e.g. KVS_SERVER_CONFIG="maintenance.intervalMillis=200" (later lines win)
        String extraEnv = System.getenv("KVS_SERVER_CONFIG");
        if (extraEnv != null && !extraEnv.isBlank()) {
            for (String line : extraEnv.split(";")) {
                sb.append(line.trim()).append('\n');
            }
        }
        Files.writeString(conf, sb.toString());
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.addAll(ChronicleJvmFlags.FLAGS);
        // e.g. KVS_SERVER_JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/kvs.jfr" to profile the server
        String extra = System.getenv("KVS_SERVER_JAVA_OPTS");
        if (extra != null && !extra.isBlank()) {
            cmd.addAll(List.of(extra.trim().split("\\s+")));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.jameskvs.server.KvsServerMain",
                conf.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("server.log").toFile()).start();
        awaitPort(port, p, dir.resolve("server.log"));
        return new Running(port, metricsPort, p, dir);
    }

    /** A Redis server persisting as {@code persistence} says (no RDB snapshots in any mode). */
    public static Running redis(RedisPersistence persistence) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("bench-redis");
        int port = freePort();
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--dir", dir.toString(), "--daemonize", "no"));
        cmd.addAll(persistence.options());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        awaitPort(port, p, dir.resolve("redis.log"));
        return new Running(port, -1, p, dir);
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void awaitPort(int port, Process p, Path log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException("server exited: " + Files.readString(log));
            }
            try (Socket s = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        p.destroyForcibly();
        throw new IOException("server did not open port " + port + " within 60 s");
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // best effort: a temp dir
        }
    }
}
