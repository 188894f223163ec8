package org.jameskvs.app.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * A real Apache James 3.8.1 memory app process started from target/james/lib (system property
 * {@code james.lib}) with org.jameskvs.app.KvsMemoryJamesServerMain (or the main named by the system
 * property {@code james.main}: james-kvs-bench's, for the ActiveMQ baseline), a copy of james-conf and
 * free ports.
 */
final class JamesProcess implements AutoCloseable {
    static final String MAIN = System.getProperty("james.main", "org.jameskvs.app.KvsMemoryJamesServerMain");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);

    private final ChildProcess process;
    private final int smtpPort;
    private final int webadminPort;

    private JamesProcess(ChildProcess process, int smtpPort, int webadminPort) {
        this.process = process;
        this.smtpPort = smtpPort;
        this.webadminPort = webadminPort;
    }

    static Path lib() throws IOException {
        String lib = System.getProperty("james.lib");
        if (lib == null || !Files.isDirectory(Path.of(lib))) {
            throw new IllegalStateException("james.lib is not a directory (run 'mvn install', which packages target/james/lib first): " + lib);
        }
        try (Stream<Path> jars = Files.list(Path.of(lib))) {
            List<String> names = jars.map(p -> p.getFileName().toString()).toList();
            if (names.stream().noneMatch(n -> n.startsWith("james-server-memory-app-"))) {
                throw new IllegalStateException(lib + " has no james-server-memory-app jar");
            }
        }
        return Path.of(lib);
    }

    /**
     * Starts James with {@code queue} (kvs, memory; activemq with james-kvs-bench's main) in
     * {@code workingDirectory}; the caller adjusts the copied configuration (ports are already set).
     * Waits (bounded) until it has started.
     */
    static JamesProcess start(Path workingDirectory, String queue, int sinkPort, Consumer<JamesConf> configure) throws Exception {
        JamesProcess james = launch(workingDirectory, queue, sinkPort, configure);
        james.awaitStarted();
        return james;
    }

    /** Like {@link #start}, without waiting: for a James expected to refuse to start. */
    static JamesProcess launch(Path workingDirectory, String queue, int sinkPort, Consumer<JamesConf> configure) throws Exception {
        Path lib = lib();
        int smtpPort = FreePorts.next();
        int webadminPort = FreePorts.next();
        JamesConf conf = JamesConf.copyInto(workingDirectory)
            .smtpPort(smtpPort)
            .webadminPort(webadminPort)
            .gatewayPort(sinkPort);
        configure.accept(conf);
        List<String> command = List.of(
            ChildProcess.javaBinary(),
            "-Xmx768m",
            "-cp", lib.toAbsolutePath() + "/*",
            "-Dworking.directory=" + workingDirectory.toAbsolutePath(),
            "-Dlogback.configurationFile=" + workingDirectory.resolve("conf/logback.xml").toAbsolutePath(),
            "-Dkvs.queue=" + queue,
            MAIN);
        ChildProcess process = ChildProcess.start("james", command, workingDirectory, workingDirectory.resolve("james.log"));
        return new JamesProcess(process, smtpPort, webadminPort);
    }

    /** Waits (bounded) for the process to end by itself; true if it did. */
    boolean awaitExit(Duration timeout) throws InterruptedException {
        return process.process().waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void awaitStarted() throws Exception {
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (Instant.now().isBefore(deadline) && process.isAlive()) {
            if (process.logText().contains("JAMES server started") && FreePorts.accepts(smtpPort)) {
                return;
            }
            Thread.sleep(250);
        }
        String tail = process.logTail(80);
        process.close();
        throw new IllegalStateException("James did not start within " + START_TIMEOUT + "\n" + tail);
    }

    int smtpPort() {
        return smtpPort;
    }

    int webadminPort() {
        return webadminPort;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String logText() {
        return process.logText();
    }

    String logTail(int lines) {
        return process.logTail(lines);
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
