package org.jameskvs.faults;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jameskvs.server.ChronicleJvmFlags;

/**
 * One KVS server node as a real OS process (the JVM flags Chronicle needs, the class path of this
 * JVM), optionally inside a network namespace ({@code ip netns exec NS java ...}). The node keeps
 * its data directory and port across restarts; its output is appended to {@code node.log}.
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
    private final String listenHost;
    private final List<String> extraProps;
    private Process process;

    public NodeProcess(String name, Path dir, String netns, String host, String standbyHost, int port,
                       String listenHost, List<String> extraProps) {
        this.standbyHost = standbyHost;
        this.name = name;
        this.dir = dir;
        this.dataDir = dir.resolve("data");
        this.netns = netns;
        this.host = host;
        this.port = port;
        this.listenHost = listenHost;
        this.extraProps = List.copyOf(extraProps);
    }

    /** A node on 127.0.0.1 with a free port. */
    public static NodeProcess local(String name, Path dir, String... extraProps) throws IOException {
        return new NodeProcess(name, dir, null, "127.0.0.1", "127.0.0.1", freePort(), "127.0.0.1",
                List.of(extraProps));
    }

    /**
     * A free port below Linux's ephemeral range (32768..60999). A port the kernel hands out for
     * {@code bind(0)} comes from that range, where any outgoing connection may take it as its local
     * port while the node is down, and the node's restart on it then fails (seen: "Address already
     * in use" on a kill -9 restart).
     */
    public static int freePort() throws IOException {
        java.util.Random rnd = new java.util.Random();
        for (int i = 0; i < 200; i++) {
            int port = 20_000 + rnd.nextInt(12_000);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException inUse) {
                // try another
            }
        }
        throw new IOException("no free port in 20000..31999");
    }

    /** Starts the process and waits (bounded) until it listens. */
    public synchronized NodeProcess start() throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path conf = dir.resolve("kvs.properties");
        StringBuilder sb = new StringBuilder()
                .append("listen.host=").append(listenHost).append('\n')
                .append("listen.port=").append(port).append('\n')
                .append("data.dir=").append(dataDir).append('\n')
                .append("auth.password=").append(FaultCluster.PASSWORD).append('\n')
                .append("metrics.enabled=false\n")
                .append("disk.minFreeBytes=0\n")
                .append("shutdown.graceMillis=500\n");
        for (String p : extraProps) {
            sb.append(p).append('\n');
        }
        Files.writeString(conf, sb.toString());
        List<String> cmd = new ArrayList<>();
        if (netns != null) {
            cmd.addAll(List.of("ip", "netns", "exec", netns));
        }
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        cmd.addAll(ChronicleJvmFlags.FLAGS);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "org.jameskvs.server.KvsServerMain",
                conf.toString()));
        Path log = dir.resolve("node.log");
        long from = Files.exists(log) ? Files.size(log) : 0;
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String text = tail(log, from);
            if (text.contains("listening on")) {
                return this;
            }
            if (!process.isAlive()) {
                throw new IOException(name + " exited (" + process.exitValue() + ") before listening:\n" + text);
            }
            Thread.sleep(50);
        }
        process.destroyForcibly();
        throw new IOException(name + " did not listen within 60 s:\n" + tail(log, from));
    }

    private static String tail(Path log, long from) throws IOException {
        byte[] all = Files.readAllBytes(log);
        return new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from),
                StandardCharsets.UTF_8);
    }

    public String log() {
        try {
            return Files.readString(dir.resolve("node.log"));
        } catch (IOException e) {
            return "";
        }
    }

    public synchronized long pid() {
        return process.pid();
    }

    public synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    /** SIGKILL: no shutdown hook, nothing flushed by the JVM (the page cache survives). */
    public synchronized void kill9() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** SIGSTOP: the process freezes; its sockets stay open and the kernel still accepts connections. */
    public void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** SIGCONT. */
    public void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    private void signal(String sig) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", sig, Long.toString(pid())).inheritIO().start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new IOException("kill " + sig + " " + pid() + " failed");
        }
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

    /** SIGTERM, then SIGKILL after 10 s. */
    @Override
    public synchronized void close() throws InterruptedException {
        if (process == null) {
            return;
        }
        try {
            if (process.isAlive()) {
                new ProcessBuilder("kill", "-CONT", Long.toString(process.pid())).start().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (IOException ignored) {
            // best effort: a paused process would not react to SIGTERM
        }
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return name + "@" + host + ":" + port + (netns == null ? "" : " in netns " + netns);
    }
}
