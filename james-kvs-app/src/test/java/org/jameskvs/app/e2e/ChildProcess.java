package org.jameskvs.app.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A JVM started by a test, its output in a log file; stopped with SIGTERM, then SIGKILL after a bound. */
final class ChildProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;
    private final Thread killOnExit;

    private ChildProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.killOnExit = new Thread(process::destroyForcibly, "kill-" + name);
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    static ChildProcess start(String name, List<String> command, Path workingDirectory, Path log) throws IOException {
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command)
            .directory(workingDirectory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
        return new ChildProcess(name, process, log);
    }

    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    Process process() {
        return process;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** The last {@code lines} lines of the log, for failure messages. */
    String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(log);
            return name + " log " + log + ":\n" + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SIGTERM; SIGKILL if still running after 30 s. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException e) {
            // JVM already shutting down
        }
    }
}
