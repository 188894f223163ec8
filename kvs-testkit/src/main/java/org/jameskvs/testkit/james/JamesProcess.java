package org.jameskvs.testkit.james;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import org.jameskvs.testkit.ChildProcess;
import org.jameskvs.testkit.FreePorts;

/**
 * A real Apache James 3.8.1 memory app process: the one James launcher of the end-to-end tests, the
 * whole-path suite and the spool benchmark. It runs from the James {@code lib/} folder (system property
 * {@code james.lib}) with org.jameskvs.app.KvsMemoryJamesServerMain (or the main named by the system
 * property {@code james.main}: james-kvs-bench's, for the ActiveMQ baseline), a copy of james-conf
 * ({@link JamesConf}) and free SMTP and webadmin ports. Its folder, configuration and ports are fixed at
 * creation, so {@link #kill9()} then {@link #startAgain()} restarts the same James.
 */
public final class JamesProcess implements AutoCloseable {
    public static final String MAIN = System.getProperty("james.main", "org.jameskvs.app.KvsMemoryJamesServerMain");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);

    private final Path directory;
    private final int smtpPort;
    private final int webadminPort;
    private final List<String> command;
    private ChildProcess process;
    private int starts;

    private JamesProcess(Path directory, int smtpPort, int webadminPort, List<String> command) {
        this.directory = directory;
        this.smtpPort = smtpPort;
        this.webadminPort = webadminPort;
        this.command = command;
    }

    /**
     * Starts James with {@code queue} (kvs, memory; activemq with james-kvs-bench's main) in
     * {@code workingDirectory}, RemoteDelivery's gateway on {@code sinkPort}; {@code configure} adjusts
     * the copied configuration (ports are already set). Waits (bounded) until it has started.
     */
    public static JamesProcess start(Path workingDirectory, String queue, int sinkPort, Consumer<JamesConf> configure) throws Exception {
        return create(workingDirectory, queue, sinkPort, List.of(), configure).startAgain();
    }

    /** Like {@link #start}, without waiting: for a James expected to refuse to start. */
    public static JamesProcess launch(Path workingDirectory, String queue, int sinkPort, Consumer<JamesConf> configure) throws Exception {
        JamesProcess james = create(workingDirectory, queue, sinkPort, List.of(), configure);
        james.launch();
        return james;
    }

    /**
     * Writes the configuration without starting James ({@link #startAgain()} does).
     * @param jvmFlags more flags for James's JVM (e.g. C1 only and the serial collector)
     */
    public static JamesProcess create(Path workingDirectory, String queue, int sinkPort, List<String> jvmFlags,
                                      Consumer<JamesConf> configure) throws IOException {
        return create(workingDirectory, lib() + "/*", queue, sinkPort, jvmFlags, configure);
    }

    /**
     * Like {@link #create(Path, String, int, List, Consumer)}, with James's class path given (as an
     * operator's install has it, e.g. {@code james-server-memory-app.jar:james-server-memory-app.lib/*}).
     */
    public static JamesProcess create(Path workingDirectory, String classpath, String queue, int sinkPort, List<String> jvmFlags,
                                      Consumer<JamesConf> configure) throws IOException {
        Path dir = workingDirectory.toAbsolutePath();
        int smtpPort = FreePorts.next();
        int webadminPort = FreePorts.next();
        JamesConf conf = JamesConf.copyInto(dir).smtpPort(smtpPort).webadminPort(webadminPort).gatewayPort(sinkPort);
        configure.accept(conf);
        List<String> command = new ArrayList<>(List.of(ChildProcess.javaBinary(), "-Xmx768m"));
        command.addAll(jvmFlags);
        command.addAll(List.of(
            "-cp", classpath,
            "-Dworking.directory=" + dir,
            "-Dlogback.configurationFile=" + dir.resolve("conf/logback.xml"),
            "-Dkvs.queue=" + queue,
            MAIN));
        return new JamesProcess(dir, smtpPort, webadminPort, command);
    }

    /** The James lib/ folder (system property {@code james.lib}), checked: it holds the memory app. */
    public static Path lib() throws IOException {
        String lib = System.getProperty("james.lib");
        if (lib == null || !Files.isDirectory(Path.of(lib))) {
            throw new IllegalStateException("james.lib is not a directory (run 'mvn install', which packages target/james/lib first): " + lib);
        }
        try (Stream<Path> jars = Files.list(Path.of(lib))) {
            if (jars.map(p -> p.getFileName().toString()).noneMatch(n -> n.startsWith("james-server-memory-app-"))) {
                throw new IllegalStateException(lib + " has no james-server-memory-app jar");
            }
        }
        return Path.of(lib).toAbsolutePath();
    }

    /** Starts James (again) with the same folder, configuration and ports; waits until SMTP answers (180 s). */
    public synchronized JamesProcess startAgain() throws Exception {
        return startAgain(List.of());
    }

    /** Like {@link #startAgain()}, the command run behind {@code commandPrefix} (e.g. a raised open-files limit). */
    public synchronized JamesProcess startAgain(List<String> commandPrefix) throws Exception {
        launch(commandPrefix);
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (Instant.now().isBefore(deadline) && process.isAlive()) {
            if (process.logText().contains("JAMES server started") && FreePorts.accepts(smtpPort)) {
                return this;
            }
            Thread.sleep(200);
        }
        String tail = process.logTail(80);
        process.close();
        throw new IllegalStateException("James did not start within " + START_TIMEOUT + "\n" + tail);
    }

    private void launch() throws IOException {
        launch(List.of());
    }

    private void launch(List<String> commandPrefix) throws IOException {
        if (isAlive()) {
            throw new IllegalStateException("James is running");
        }
        List<String> run = new ArrayList<>(commandPrefix);
        run.addAll(command);
        starts++;
        process = ChildProcess.start("james", run, directory, directory.resolve("james-" + starts + ".log"));
    }

    /** Waits (bounded) for the process to end by itself; true if it did. */
    public boolean awaitExit(Duration timeout) throws InterruptedException {
        return process.process().waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public Path directory() {
        return directory;
    }

    public int smtpPort() {
        return smtpPort;
    }

    public int webadminPort() {
        return webadminPort;
    }

    public synchronized long pid() {
        return process.pid();
    }

    public synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** The current start's log. */
    public synchronized String logText() {
        return process.logText();
    }

    public synchronized String logTail(int lines) {
        return process.logTail(lines);
    }

    /** SIGKILL, and wait for the exit (bounded). */
    public synchronized void kill9() throws InterruptedException {
        process.kill9();
    }

    /** Sends a signal ({@code STOP}, {@code CONT}): pausing James without killing it. */
    public synchronized void signal(String signal) throws IOException, InterruptedException {
        process.signal(signal);
    }

    /** SIGTERM, then SIGKILL after 30 s: James stopped as an operator stops it. */
    @Override
    public synchronized void close() throws InterruptedException {
        if (process != null) {
            process.close();
        }
    }
}
