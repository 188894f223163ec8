package org.jameskvs.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One KVS server node as a real OS process: the one launcher of every test, fault rig and benchmark,
 * so that a test can kill it with SIGKILL, freeze it with SIGSTOP, or restart it as the same node (same
 * port, same data directory, same configuration). It runs either {@code java -jar kvs-server.jar}
 * (system property {@code kvs.server.jar}; the jar's manifest carries Chronicle's JVM flags, as
 * bin/kvs-server runs it) or a main class from the caller's class path with {@link ChronicleJvmFlags}
 * (the server's own tests, which also start test mains that install a seam first).
 *
 * <p>Its folder holds {@code kvs-server.properties} and one log per start ({@code kvs-server-N.log});
 * the journal is in {@code data/} unless {@link Builder#dataDir} says otherwise. A start waits
 * (bounded) until the server logs that it listens.
 */
public final class KvsServerProcess implements AutoCloseable {
    /** The password of a node unless {@link Builder#password} gives another. */
    public static final String PASSWORD = "testkit-secret";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final String name;
    private final Path directory;
    private final int port;
    private final int metricsPort;
    private final Path config;
    private final String baseProperties;
    private final List<String> command;
    private ChildProcess process;
    private int starts;

    private KvsServerProcess(Builder b, int port, int metricsPort) {
        this.name = b.name;
        this.directory = b.directory;
        this.port = port;
        this.metricsPort = metricsPort;
        this.config = b.directory.resolve("kvs-server.properties");
        StringBuilder base = new StringBuilder()
            .append("listen.host=").append(b.listenHost).append('\n')
            .append("listen.port=").append(port).append('\n')
            .append("data.dir=").append(b.dataDir == null ? b.directory.resolve("data") : b.dataDir).append('\n')
            .append("auth.password=").append(b.password).append('\n')
            .append("disk.minFreeBytes=0\n")
            .append("shutdown.graceMillis=2000\n");
        if (b.user != null) {
            base.append("auth.user=").append(b.user).append('\n');
        }
        if (metricsPort > 0) {
            base.append("metrics.enabled=true\nmetrics.host=127.0.0.1\nmetrics.port=").append(metricsPort).append('\n');
        } else {
            base.append("metrics.enabled=false\n");
        }
        this.baseProperties = base.toString();
        this.command = command(b);
    }

    /**
     * Starts a node from kvs-server.jar in {@code directory}, with the default password, a free port
     * and these more {@code key=value} configuration lines.
     */
    public static KvsServerProcess start(Path directory, String... properties) throws IOException, InterruptedException {
        return in(directory).properties(properties).start();
    }

    /** A node whose configuration, logs and (by default) data live in {@code directory}. */
    public static Builder in(Path directory) {
        return new Builder(directory);
    }

    /** What a node is; {@link #start()} writes its configuration and starts it. */
    public static final class Builder {
        private final Path directory;
        private String name = "kvs-server";
        private Path dataDir;
        private int port;
        private boolean metrics;
        private String listenHost = "127.0.0.1";
        private String user;
        private String password = PASSWORD;
        private String maxHeap = "256m";
        private final List<String> jvmFlags = new ArrayList<>();
        private final List<String> commandPrefix = new ArrayList<>();
        private final List<String> properties = new ArrayList<>();
        private String mainClass;
        private final List<String> mainArgs = new ArrayList<>();

        private Builder(Path directory) {
            this.directory = directory.toAbsolutePath();
        }

        /** For log lines and failure messages. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** The journal's folder, when it is not {@code data/} in the node's folder. */
        public Builder dataDir(Path dataDir) {
            this.dataDir = dataDir.toAbsolutePath();
            return this;
        }

        /** The node's port; by default a free one ({@link FreePorts#next()}). */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** Serve Prometheus metrics on a free port ({@link #metricsPort()}); off by default. */
        public Builder metrics() {
            this.metrics = true;
            return this;
        }

        public Builder listenHost(String listenHost) {
            this.listenHost = listenHost;
            return this;
        }

        /** {@code auth.user}; the server's default when not given. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /** The server JVM's {@code -Xmx} value; 256m by default. */
        public Builder maxHeap(String maxHeap) {
            this.maxHeap = maxHeap;
            return this;
        }

        /** More JVM flags (e.g. {@code -XX:+UseSerialGC}). */
        public Builder jvmFlags(List<String> flags) {
            jvmFlags.addAll(flags);
            return this;
        }

        /**
         * Words before {@code java}: {@code ip netns exec NS} to run in a network namespace, or
         * {@link ChildProcess#withOpenFiles}'s wrapper.
         */
        public Builder commandPrefix(List<String> prefix) {
            commandPrefix.addAll(prefix);
            return this;
        }

        /** More {@code key=value} configuration lines; a key given again wins over the launcher's. */
        public Builder properties(String... lines) {
            properties.addAll(List.of(lines));
            return this;
        }

        /**
         * Runs {@code mainClass} from this JVM's class path with {@link ChronicleJvmFlags} instead of
         * {@code java -jar kvs-server.jar}: {@code org.jameskvs.server.KvsServerMain}, or a test main
         * that installs a seam first. It gets the configuration file, then {@code args}.
         */
        public Builder fromClassPath(String mainClass, String... args) {
            this.mainClass = Objects.requireNonNull(mainClass);
            this.mainArgs.addAll(List.of(args));
            return this;
        }

        /** {@code org.jameskvs.server.KvsServerMain} from this JVM's class path. */
        public Builder fromClassPath() {
            return fromClassPath("org.jameskvs.server.KvsServerMain");
        }

        /** Writes the configuration and starts the node (bounded wait until it listens). */
        public KvsServerProcess start() throws IOException, InterruptedException {
            KvsServerProcess node = create();
            node.startAgain();
            return node;
        }

        /** Writes the configuration; {@link KvsServerProcess#startAgain()} starts the node. */
        public KvsServerProcess create() throws IOException {
            Files.createDirectories(directory);
            KvsServerProcess node = new KvsServerProcess(this, port > 0 ? port : FreePorts.next(), metrics ? FreePorts.next() : -1);
            node.configure(properties.toArray(String[]::new));
            return node;
        }
    }

    private List<String> command(Builder b) {
        List<String> cmd = new ArrayList<>(b.commandPrefix);
        cmd.add(ChildProcess.javaBinary());
        cmd.add("-Xmx" + b.maxHeap);
        cmd.addAll(b.jvmFlags);
        if (b.mainClass == null) {
            cmd.addAll(List.of("-jar", serverJar().toString(), config.toString()));
        } else {
            cmd.addAll(ChronicleJvmFlags.FLAGS);
            cmd.addAll(List.of("-cp", ChildProcess.classPath(), b.mainClass, config.toString()));
            cmd.addAll(b.mainArgs);
        }
        return cmd;
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

    /** Rewrites the configuration: the launcher's lines plus these {@code key=value} lines, from the next start. */
    public void configure(String... properties) throws IOException {
        Files.writeString(config, baseProperties + String.join("\n", properties) + "\n");
    }

    /** Starts the node (again): same port, data and configuration; waits until it listens (60 s). */
    public synchronized KvsServerProcess startAgain() throws IOException, InterruptedException {
        if (isRunning()) {
            throw new IllegalStateException(name + " is running");
        }
        launch();
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (Instant.now().isBefore(deadline)) {
            // The server's own line, written once it has bound its port: a port that accepts could be
            // another process's (a node in a network namespace listens on another host).
            if (process.logText().contains("listening on")) {
                return this;
            }
            if (!process.isAlive()) {
                break;
            }
            Thread.sleep(50);
        }
        String tail = process.logTail(40);
        process.close();
        process = null;
        throw new IllegalStateException(name + " did not start listening on " + port + " within " + START_TIMEOUT + "\n" + tail);
    }

    /** Starts the process without waiting: for a server expected to refuse its configuration and exit. */
    public synchronized ChildProcess launch() throws IOException {
        starts++;
        process = ChildProcess.start(name, command, directory, directory.resolve("kvs-server-" + starts + ".log"));
        return process;
    }

    public String name() {
        return name;
    }

    public Path directory() {
        return directory;
    }

    public int port() {
        return port;
    }

    /** The Prometheus port, or -1 without {@link Builder#metrics()}. */
    public int metricsPort() {
        return metricsPort;
    }

    public String address() {
        return "127.0.0.1:" + port;
    }

    /** The running process (a benchmark reads its CPU time, a fault kills it mid-request). */
    public synchronized Process process() {
        return process.process();
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    public synchronized long pid() {
        return process.pid();
    }

    /** The current start's output. */
    public synchronized String logText() {
        return process == null ? "" : process.logText();
    }

    public synchronized String logTail(int lines) {
        return process == null ? name + " not running" : process.logTail(lines);
    }

    /** SIGKILL: no shutdown hook, no graceful close; the journal stays as the kernel has it. */
    public synchronized void kill9() throws InterruptedException {
        if (process != null) {
            process.kill9();
            process = null;
        }
    }

    /** SIGSTOP: the process freezes; its sockets stay open and the kernel still accepts connections. */
    public synchronized void pause() throws IOException, InterruptedException {
        process.signal("STOP");
    }

    /** SIGCONT. */
    public synchronized void resume() throws IOException, InterruptedException {
        process.signal("CONT");
    }

    /** SIGTERM (graceful stop), SIGKILL after 30 s. */
    public synchronized void stop() throws InterruptedException {
        if (process != null) {
            process.close();
            process = null;
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    @Override
    public String toString() {
        return name + "@" + address();
    }
}
