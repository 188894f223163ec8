package org.jameskvs.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

import org.jameskvs.testkit.KvsServerProcess;

/**
 * One KVS server node of the suite: the test kit's {@link KvsServerProcess} ({@code java -jar
 * kvs-server.jar}, the way bin/kvs-server starts it) with the suite's child JVM flags and open-files
 * limit, serving its Prometheus metrics so tests can read {@code kvs_connections}. After
 * {@link #kill9()} or {@link #stop()}, {@link #startAgain()} brings back the same node with its journal;
 * {@link #pause()} and {@link #resume()} freeze and thaw it; {@link #wipeDisk()} after a kill brings it
 * back on an empty disk.
 */
final class KvsNode implements AutoCloseable {
    static final String PASSWORD = "it-secret";

    private final KvsServerProcess process;
    /** The journal's folder: {@code data/} in the node's folder, the test kit's default. */
    private final Path dataDirectory;

    private KvsNode(KvsServerProcess process, Path dataDirectory) {
        this.process = process;
        this.dataDirectory = dataDirectory;
    }

    static KvsNode start(String name, Path directory) throws Exception {
        return new KvsNode(KvsServerProcess.in(directory).name(name).password(PASSWORD).metrics()
            .jvmFlags(Limits.CHILD_JVM_FLAGS).commandPrefix(Limits.openFilesPrefix()).start(), directory.resolve("data"));
    }

    String name() {
        return process.name();
    }

    int port() {
        return process.port();
    }

    String address() {
        return process.address();
    }

    boolean isRunning() {
        return process.isRunning();
    }

    long pid() {
        return process.pid();
    }

    /** Starts the node (again): same port, same data directory; waits until it listens. */
    void startAgain() throws Exception {
        process.startAgain();
    }

    /** SIGKILL: no shutdown hook, no graceful close; the journal stays as the kernel has it. */
    void kill9() throws InterruptedException {
        process.kill9();
    }

    /** Deletes the journal's folder (the node must be down): it comes back on an empty disk. */
    void wipeDisk() throws IOException {
        if (isRunning()) {
            throw new IllegalStateException(name() + " is running: kill it before wiping its disk");
        }
        try (Stream<Path> paths = Files.walk(dataDirectory)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** SIGSTOP: the process freezes; its sockets stay open. */
    void pause() throws IOException, InterruptedException {
        process.pause();
    }

    /** SIGCONT. */
    void resume() throws IOException, InterruptedException {
        process.resume();
    }

    /** SIGTERM (graceful stop), SIGKILL after 30 s. */
    void stop() throws InterruptedException {
        process.stop();
    }

    /** The value of an unlabelled gauge/counter on the node's /metrics, or -1 if absent. */
    double metric(String metric) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = client.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + process.metricsPort() + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
        for (String line : response.body().split("\n")) {
            if (line.startsWith(metric + " ") || line.startsWith(metric + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }

    String logTail(int lines) {
        return process.logTail(lines);
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
