package org.jameskvs.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.jameskvs.testkit.FreePorts;
import org.jameskvs.testkit.KvsServerProcess;

/**
 * One KVS server node of a fault scenario: a {@link KvsServerProcess} (the test kit's launcher: a real
 * OS process, kept data directory and port across restarts) with the addresses a client reaches it
 * on, optionally inside a network namespace ({@code ip netns exec NS java ...}).
 * Faults: {@link #kill9()} (SIGKILL), {@link #pause()} / {@link #resume()} (SIGSTOP / SIGCONT).
 */
public final class NodeProcess implements AutoCloseable {
    public final String name;
    public final Path dir;
    public final Path dataDir;
    public final String host;
    /** Address of the standby path (another network segment); = host when there is only one. */
    public final String standbyHost;
    public final int port;
    private final String netns;
    private final KvsServerProcess.Builder launcher;
    private KvsServerProcess process;

    public NodeProcess(String name, Path dir, String netns, String host, String standbyHost, int port,
                       String listenHost, List<String> extraProps) {
        this.standbyHost = standbyHost;
        this.name = name;
        this.dir = dir;
        this.dataDir = dir.resolve("data");
        this.netns = netns;
        this.host = host;
        this.port = port;
        List<String> properties = new ArrayList<>(List.of("shutdown.graceMillis=500"));
        properties.addAll(extraProps);
        this.launcher = KvsServerProcess.in(dir).name(name).dataDir(dataDir).port(port).listenHost(listenHost)
                .password(FaultCluster.PASSWORD).jvmFlags(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"))
                .commandPrefix(netns == null ? List.of() : List.of("ip", "netns", "exec", netns))
                .properties(properties.toArray(String[]::new)).fromClassPath();
    }

    /** A node on 127.0.0.1 with a free port. */
    public static NodeProcess local(String name, Path dir, String... extraProps) {
        return new NodeProcess(name, dir, null, "127.0.0.1", "127.0.0.1", FreePorts.next(), "127.0.0.1",
                List.of(extraProps));
    }

    /** Starts the process (again: same port and data) and waits (bounded) until it listens. */
    public synchronized NodeProcess start() throws IOException, InterruptedException {
        if (process == null) {
            process = launcher.create();
        }
        process.startAgain();
        return this;
    }

    /** Every start's output, oldest first. */
    public String log() {
        try (Stream<Path> logs = Files.list(dir)) {
            StringBuilder all = new StringBuilder();
            for (Path log : logs.filter(p -> p.getFileName().toString().matches("kvs-server-\\d+\\.log"))
                    .sorted((a, b) -> Integer.compare(startNumber(a), startNumber(b))).toList()) {
                all.append(Files.readString(log));
            }
            return all.toString();
        } catch (IOException e) {
            return "";
        }
    }

    private static int startNumber(Path log) {
        return Integer.parseInt(log.getFileName().toString().replaceAll("\\D", ""));
    }

    public synchronized long pid() {
        return process.pid();
    }

    public synchronized boolean alive() {
        return process != null && process.isRunning();
    }

    /** SIGKILL: no shutdown hook, nothing flushed by the JVM (the page cache survives). */
    public synchronized void kill9() throws InterruptedException {
        if (process != null) {
            process.kill9();
        }
    }

    /** SIGSTOP: the process freezes; its sockets stay open and the kernel still accepts connections. */
    public synchronized void pause() throws IOException, InterruptedException {
        process.pause();
    }

    /** SIGCONT. */
    public synchronized void resume() throws IOException, InterruptedException {
        process.resume();
    }

    /** The newest journal file ({@code *.cq4}) under the data directory. */
    public Path newestJournalFile() throws IOException {
        try (var s = Files.walk(dataDir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".cq4"))
                    .max((a, b) -> {
                        try {
                            return Files.getLastModifiedTime(a).compareTo(Files.getLastModifiedTime(b));
                        } catch (IOException e) {
                            return 0;
                        }
                    }).orElseThrow(() -> new IOException("no *.cq4 under " + dataDir));
        }
    }

    /** SIGCONT, SIGTERM, then SIGKILL after a bound. */
    @Override
    public synchronized void close() throws InterruptedException {
        if (process != null) {
            process.close();
        }
    }

    @Override
    public String toString() {
        return name + "@" + host + ":" + port + (netns == null ? "" : " in netns " + netns);
    }
}
