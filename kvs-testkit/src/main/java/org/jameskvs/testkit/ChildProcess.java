package org.jameskvs.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A process started by a test or a benchmark, its output appended to a log file; stopped with SIGTERM,
 * then SIGKILL after a bound, and killed when this JVM exits (a shutdown hook), so that no server
 * outlives the run that started it.
 */
public final class ChildProcess implements AutoCloseable {
    private static final long STOP_SECONDS = 30;

    private final String name;
    private final Process process;
    private final Path log;
    private final long logStart;
    private final Thread killOnExit;

    private ChildProcess(String name, Process process, Path log, long logStart) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.logStart = logStart;
        this.killOnExit = new Thread(process::destroyForcibly, "kill-" + name);
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /** Starts {@code command} in {@code workingDirectory}, stdout and stderr appended to {@code log}. */
    public static ChildProcess start(String name, List<String> command, Path workingDirectory, Path log) throws IOException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        long logStart = Files.exists(log) ? Files.size(log) : 0;
        Process process = new ProcessBuilder(command)
            .directory(workingDirectory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
        return new ChildProcess(name, process, log, logStart);
    }

    /** The {@code java} of the running JVM. */
    public static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * This JVM's class path with every entry made absolute: a child is started in its own working
     * directory, where a relative entry ({@code java -cp target/benchmarks.jar ...}) names nothing.
     */
    public static String classPath() {
        return absoluteClassPath(System.getProperty("java.class.path"));
    }

    static String absoluteClassPath(String classPath) {
        List<String> entries = new ArrayList<>();
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            if (!entry.isEmpty()) {
                boolean wildcard = entry.endsWith("*");
                String dir = wildcard ? entry.substring(0, entry.length() - 1) : entry;
                String absolute = Path.of(dir.isEmpty() ? "." : dir).toAbsolutePath().normalize().toString();
                entries.add(wildcard ? absolute + java.io.File.separator + "*" : absolute);
            }
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    /**
     * {@code command} run with the open-files limit raised to {@code openFiles} (or the hard limit, if
     * lower and not raisable): {@code bash -c 'ulimit -n N; exec "$@"'}, exec keeping the pid.
     */
    public static List<String> withOpenFiles(int openFiles, List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("bash", "-c",
            "ulimit -n " + openFiles + " 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; exec \"$@\"", "launcher"));
        wrapped.addAll(command);
        return wrapped;
    }

    public Process process() {
        return process;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public Path log() {
        return log;
    }

    /** What this start of the process wrote (an appended log's earlier starts left out). */
    public String logText() {
        try {
            byte[] all = Files.readAllBytes(log);
            int from = (int) Math.min(logStart, all.length);
            return new String(all, from, all.length - from, java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The last {@code lines} lines of {@link #logText()}, for failure messages. */
    public String logTail(int lines) {
        List<String> all = logText().lines().toList();
        return name + " log " + log + ":\n" + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /** SIGKILL: no shutdown hook, nothing flushed by the process (the page cache survives); waits for the exit. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + pid() + ") still alive " + STOP_SECONDS + " s after SIGKILL");
        }
        removeHook();
    }

    /** Sends a signal ({@code STOP}, {@code CONT}, ...): e.g. freezes the process without killing it. */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + pid() + " failed");
        }
    }

    /** SIGCONT (a frozen process would not react to SIGTERM), SIGTERM, SIGKILL if still running after 30 s. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            try {
                signal("CONT");
            } catch (IOException | RuntimeException e) {
                // best effort: it may have exited meanwhile
            }
        }
        process.destroy();
        if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(STOP_SECONDS, TimeUnit.SECONDS);
        }
        removeHook();
    }

    private void removeHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException e) {
            // this JVM is already shutting down
        }
    }
}
