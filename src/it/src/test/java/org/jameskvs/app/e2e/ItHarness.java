package org.jameskvs.app.e2e;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Public door to james-kvs-app's e2e harness (its classes are package-private; this class sits in
 * their package, on the test classpath through james-kvs-app's test-jar). The whole-path suite in
 * {@code org.jameskvs.it} uses these; nothing here changes how the harness behaves.
 */
public final class ItHarness {
    private ItHarness() {
    }

    /** A free loopback port ({@link FreePorts#next()}). */
    public static int freePort() {
        return FreePorts.next();
    }

    public static boolean accepts(int port) {
        return FreePorts.accepts(port);
    }

    public static boolean awaitAccepting(int port, Child child, Duration timeout) throws InterruptedException {
        return FreePorts.awaitAccepting(port, child == null ? null : child.process.process(), timeout);
    }

    /** james-kvs-app/target/james/lib (checked: it holds the memory app). */
    public static Path jamesLib() throws IOException {
        return JamesProcess.lib();
    }

    public static String jamesMainClass() {
        return JamesProcess.MAIN;
    }

    public static String javaBinary() {
        return ChildProcess.javaBinary();
    }

    /** Copies james-conf into {@code workingDirectory}/conf ({@link JamesConf#copyInto(Path)}). */
    public static Conf copyConf(Path workingDirectory) throws IOException {
        return new Conf(JamesConf.copyInto(workingDirectory));
    }

    public static Child start(String name, List<String> command, Path workingDirectory, Path log) throws IOException {
        return new Child(ChildProcess.start(name, command, workingDirectory, log));
    }

    /** Webadmin GET; the body of a 200, else IOException. */
    public static String webadminGet(int port, String path) throws IOException, InterruptedException {
        return new WebAdmin(port).get(path);
    }

    /** The harness's conf rewrites; each checks the text it replaces is there. */
    public static final class Conf {
        private final JamesConf conf;

        private Conf(JamesConf conf) {
            this.conf = conf;
        }

        public Conf smtpPort(int port) {
            conf.smtpPort(port);
            return this;
        }

        public Conf webadminPort(int port) {
            conf.webadminPort(port);
            return this;
        }

        public Conf gatewayPort(int port) {
            conf.gatewayPort(port);
            return this;
        }

        public Conf kvsRequestTimeoutMillis(int millis) {
            conf.kvsRequestTimeoutMillis(millis);
            return this;
        }

        public Conf kvsSingleNode(String server, String password) {
            conf.kvsSingleNode(server, password);
            return this;
        }

        public Conf replace(String file, String from, String to) {
            conf.replace(file, from, to);
            return this;
        }
    }

    /** A child JVM ({@link ChildProcess}): log file, SIGTERM-then-SIGKILL close, and kill -9. */
    public static final class Child implements AutoCloseable {
        private final ChildProcess process;

        private Child(ChildProcess process) {
            this.process = process;
        }

        public long pid() {
            return process.process().pid();
        }

        public boolean isAlive() {
            return process.isAlive();
        }

        public String logText() {
            return process.logText();
        }

        public String logTail(int lines) {
            return process.logTail(lines);
        }

        /** SIGKILL (Process.destroyForcibly on Linux) and wait for the exit (bounded). */
        public void kill9() throws InterruptedException {
            process.process().destroyForcibly();
            if (!process.process().waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("process " + pid() + " still alive 30 s after SIGKILL");
            }
            process.close(); // removes the shutdown hook
        }

        /** SIGTERM, then SIGKILL after 30 s. */
        @Override
        public void close() throws InterruptedException {
            process.close();
        }
    }
}
