package org.jameskvs.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A KVS server in its own JVM process, started from this test classpath with a config file, so
 * tests can kill -9 it for real. Public for other modules' tests (kvs-replication, through this
 * module's test jar).
 */
public final class ServerProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on [^:]+:(\\d+)");
    /** The histogram's last line: {@code Total <instances> <bytes>}. */
    private static final Pattern HISTOGRAM_TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");
    private final Process process;
    private final int port;
    private final List<String> output = new ArrayList<>();

    private ServerProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts a server on {@code dataDir} and waits (bounded) until it listens.
     * @param extraProps {@code key=value} lines added to the config; a key given again wins (e.g.
     *                   {@code listen.port=7401} for a node that must come back on its port)
     */
    public static ServerProcess start(Path dataDir, String password, String... extraProps) throws Exception {
        return startWithHeap(dataDir, password, "256m", extraProps);
    }

    /** @param maxHeap the server JVM's {@code -Xmx} value, e.g. {@code "64m"} */
    public static ServerProcess startWithHeap(Path dataDir, String password, String maxHeap, String... extraProps) throws Exception {
        return startMain(KvsServerMain.class, List.of(), dataDir, password, maxHeap, extraProps);
    }

    /**
     * @param main     the main class: {@link KvsServerMain}, or a test main that installs a test seam
     *                 first; it gets the config file, then {@code mainArgs}
     */
    static ServerProcess startMain(Class<?> main, List<String> mainArgs, Path dataDir, String password, String maxHeap,
                                   String... extraProps) throws Exception {
        Path conf = Files.createTempFile("kvs-server", ".properties");
        StringBuilder sb = new StringBuilder()
                .append("listen.port=0\n")
                .append("data.dir=").append(dataDir).append('\n')
                .append("auth.password=").append(password).append('\n')
                .append("metrics.enabled=false\n")
                .append("disk.minFreeBytes=0\n");
        for (String p : extraProps) {
            sb.append(p).append('\n');
        }
        Files.writeString(conf, sb.toString());
        Process p = new ProcessBuilder(command(conf, maxHeap, main, mainArgs)).redirectErrorStream(true).start();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        List<String> out = new ArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (out) {
                        out.add(line);
                    }
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        port.complete(Integer.parseInt(m.group(1)));
                    }
                }
            } catch (IOException ignored) {
                // process gone
            }
            port.completeExceptionally(new IllegalStateException("server exited before listening: " + out));
        }, "server-output");
        reader.setDaemon(true);
        reader.start();
        ServerProcess sp = new ServerProcess(p, port.get(60, TimeUnit.SECONDS));
        synchronized (out) {
            sp.output.addAll(out);
        }
        return sp;
    }

    /** The command line of a server JVM (this test class path, Chronicle's flags) reading {@code conf}. */
    static List<String> command(Path conf) {
        return command(conf, "256m", KvsServerMain.class, List.of());
    }

    private static List<String> command(Path conf, String maxHeap, Class<?> main, List<String> mainArgs) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + maxHeap);
        for (String flag : System.getProperty("kvs.test.jvmFlags", ChronicleFlags.JDK17).split(" ")) {
            cmd.add(flag);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.add(conf.toString());
        cmd.addAll(mainArgs);
        return cmd;
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    /**
     * Bytes of live objects in the server's heap: {@code jcmd GC.class_histogram} runs a full GC and
     * counts only what survived it, so this is the heap the server needs, not garbage waiting for a
     * collection.
     */
    long liveHeapBytesAfterGc() throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(process.pid()), "GC.class_histogram").redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
            throw new IOException("jcmd GC.class_histogram failed: " + out);
        }
        Matcher m = HISTOGRAM_TOTAL.matcher(out);
        if (!m.find()) {
            throw new IOException("no Total line in the class histogram: " + out.lines().limit(5).toList());
        }
        return Long.parseLong(m.group(1));
    }

    /** SIGKILL: no shutdown hook, no flush, nothing. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            kill9();
        }
    }
}
