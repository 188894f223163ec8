package org.jameskvs.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jameskvs.app.e2e.ItHarness;

/**
 * One KVS server node as a process ({@code java -jar kvs-server/target/kvs-server.jar config}, the
 * way bin/kvs-server and james-kvs-app's KvsServerProcess start it), on a fixed port with a fixed data
 * directory, so that after {@link #kill9()} or {@link #stop()} it comes back as the same node with its
 * journal. Unlike KvsServerProcess it can be killed with SIGKILL, and it serves its Prometheus metrics
 * (on a free port) so tests can read {@code kvs_connections}.
 */
final class KvsNode implements AutoCloseable {
    static final String PASSWORD = "it-secret";

    private final String name;
    private final Path directory;
    private final int port;
    private final int metricsPort;
    private final Path config;
    private ItHarness.Child process;
    private int starts;

    private KvsNode(String name, Path directory, int port, int metricsPort, Path config) {
        this.name = name;
        this.directory = directory;
        this.port = port;
        this.metricsPort = metricsPort;
        this.config = config;
    }

    static KvsNode start(String name, Path directory) throws Exception {
        Files.createDirectories(directory);
        int port = ItHarness.freePort();
        int metricsPort = ItHarness.freePort();
        Path config = directory.resolve("kvs-server.properties");
        Files.writeString(config, String.join("\n",
            "listen.host=127.0.0.1",
            "listen.port=" + port,
            "data.dir=" + directory.resolve("data"),
            "auth.user=james",
            "auth.password=" + PASSWORD,
            "metrics.enabled=true",
            "metrics.host=127.0.0.1",
            "metrics.port=" + metricsPort,
            "disk.minFreeBytes=0",
            "shutdown.graceMillis=2000",
            ""));
        KvsNode node = new KvsNode(name, directory, port, metricsPort, config);
        node.startAgain();
        return node;
    }

    String name() {
        return name;
    }

    int port() {
        return port;
    }

    String address() {
        return "127.0.0.1:" + port;
    }

    boolean isRunning() {
        return process != null && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    /** Starts the node (again): same port, same data directory; waits until it accepts (60 s). */
    void startAgain() throws Exception {
        if (isRunning()) {
            throw new IllegalStateException(name + " is running");
        }
        List<String> java = new ArrayList<>();
        java.add(ItHarness.javaBinary());
        java.add("-Xmx256m");
        java.addAll(Limits.CHILD_JVM_FLAGS);
        java.add("-jar");
        java.add(serverJar().toString());
        java.add(config.toString());
        starts++;
        Path log = directory.resolve("kvs-server-" + starts + ".log");
        process = ItHarness.start(name, Limits.withOpenFiles(java), directory, log);
        if (!ItHarness.awaitAccepting(port, process, Duration.ofSeconds(60))) {
            String tail = process.logTail(40);
            process.close();
            process = null;
            throw new IllegalStateException(name + " did not start on " + port + "\n" + tail);
        }
    }

    /** SIGKILL: no shutdown hook, no graceful close; the journal stays as the kernel has it. */
    void kill9() throws InterruptedException {
        if (process != null) {
            process.kill9();
            process = null;
        }
    }

    /** SIGTERM (graceful stop), SIGKILL after 30 s. */
    void stop() throws InterruptedException {
        if (process != null) {
            process.close();
            process = null;
        }
    }

    /** The value of an unlabelled gauge/counter on the node's /metrics, or -1 if absent. */
    double metric(String metric) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = client.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
        for (String line : response.body().split("\n")) {
            if (line.startsWith(metric + " ") || line.startsWith(metric + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }

    String logTail(int lines) {
        return process == null ? name + " not running" : process.logTail(lines);
    }

    private static Path serverJar() {
        String jar = System.getProperty("kvs.server.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar)) || !Files.isDirectory(Path.of(jar).resolveSibling("lib"))) {
            throw new IllegalStateException("no KVS server at kvs.server.jar=" + jar + ": run mvn install first");
        }
        return Path.of(jar);
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
