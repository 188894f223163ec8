package org.jameskvs.app.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A KVS server node in its own JVM ({@code java -jar kvs-server/target/kvs-server.jar config}, as
 * bin/kvs-server runs it; the jar's manifest carries the JVM flags Chronicle needs), with a fixed port and data directory so it can be stopped and started again
 * as the same node.
 */
final class KvsServerProcess implements AutoCloseable {
    static final String PASSWORD = "e2e-secret";

    private final Path directory;
    private final int port;
    private final Path config;
    private final String baseProperties;
    private ChildProcess process;
    private int starts;

    private KvsServerProcess(Path directory, int port, Path config, String baseProperties) {
        this.directory = directory;
        this.port = port;
        this.config = config;
        this.baseProperties = baseProperties;
    }

    /** Writes the node's config under {@code directory} and starts it on a free port. */
    static KvsServerProcess start(Path directory) throws Exception {
        return start(directory, "metrics.enabled=false");
    }

    /** Like {@link #start(Path)}, with more {@code key=value} lines for the node's config. */
    static KvsServerProcess start(Path directory, String... extraProperties) throws Exception {
        Files.createDirectories(directory);
        int port = FreePorts.next();
        Path config = directory.resolve("kvs-server.properties");
        String base = String.join("\n",
            "listen.host=127.0.0.1",
            "listen.port=" + port,
            "data.dir=" + directory.resolve("data"),
            "auth.user=james",
            "auth.password=" + PASSWORD,
            "disk.minFreeBytes=0",
            "shutdown.graceMillis=2000",
            "");
        KvsServerProcess server = new KvsServerProcess(directory, port, config, base);
        server.configure(extraProperties);
        server.startAgain();
        return server;
    }

    /** Rewrites the node's config: the base settings plus these {@code key=value} lines, from the next start. */
    void configure(String... extraProperties) throws java.io.IOException {
        Files.writeString(config, baseProperties + String.join("\n", extraProperties) + "\n");
    }

    int port() {
        return port;
    }

    String address() {
        return "127.0.0.1:" + port;
    }

    /** Starts the node (again) with the same port and data; waits until it accepts connections (60 s). */
    void startAgain() throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ChildProcess.javaBinary());
        command.add("-Xmx256m");
        command.add("-jar");
        command.add(serverJar().toString());
        command.add(config.toString());
        starts++;
        process = ChildProcess.start("kvs-server", command, directory, directory.resolve("kvs-server-" + starts + ".log"));
        if (!FreePorts.awaitAccepting(port, process.process(), Duration.ofSeconds(60))) {
            String tail = process.logTail(40);
            process.close();
            throw new IllegalStateException("KVS server did not start on " + port + "\n" + tail);
        }
    }

    /** SIGTERM and wait (bounded). */
    void stop() throws InterruptedException {
        if (process != null) {
            process.close();
            process = null;
        }
    }

    /** kvs-server/target/kvs-server.jar (its manifest names its libraries in lib/ next to it). */
    private static Path serverJar() {
        String jar = System.getProperty("kvs.server.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar)) || !Files.isDirectory(Path.of(jar).resolveSibling("lib"))) {
            throw new IllegalStateException("no KVS server at kvs.server.jar=" + jar
                + ": build it first (mvn install, or mvn install -pl kvs-server -DskipTests)");
        }
        return Path.of(jar);
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
