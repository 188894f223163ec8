package org.jameskvs.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import org.jameskvs.testkit.KvsServerProcess;

/**
 * One KVS server node of the suite: the test kit's {@link KvsServerProcess} ({@code java -jar
 * kvs-server.jar}, the way bin/kvs-server starts it) with the suite's child JVM flags and open-files
 * limit, serving its Prometheus metrics so tests can read {@code kvs_connections}. After
 * {@link #kill9()} or {@link #stop()}, {@link #startAgain()} brings back the same node with its journal;
 * {@link #pause()} and {@link #resume()} freeze and thaw it.
 */
final class KvsNode implements AutoCloseable {
    static final String PASSWORD = "it-secret";

    private final KvsServerProcess process;

    private KvsNode(KvsServerProcess process) {
        this.process = process;
    }

    static KvsNode start(String name, Path directory) throws Exception {
        return new KvsNode(KvsServerProcess.in(directory).name(name).password(PASSWORD).metrics()
            .jvmFlags(Limits.CHILD_JVM_FLAGS).commandPrefix(Limits.openFilesPrefix()).start());
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
