package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jameskvs.testkit.FreePorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/kvs-server} and the rig's image start the server JVM with the JIT flags that keep C2
 * from recompiling the request path over and over (see bin/kvs-server and report/kvs-server-jit.md):
 * the script's node runs with them (its command line, and the JVM's own view of its flags), a
 * {@code KVS_JAVA_OPTS} of the operator's comes after them, and the Dockerfile's entrypoint passes
 * the same flags.
 */
class KvsServerScriptIT {
    private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
    private static final List<String> JIT_FLAGS = List.of("-XX:PerMethodTrapLimit=0", "-XX:PerBytecodeTrapLimit=0");

    @TempDir
    Path dir;

    @Test
    void theScriptsNodeRunsWithTheJitFlagsAndTheOperatorsOptionsAfterThem() throws Exception {
        int port = FreePorts.next();
        Path conf = dir.resolve("node.properties");
        Files.writeString(conf, "listen.host=127.0.0.1\nlisten.port=" + port + "\ndata.dir=" + dir.resolve("data")
            + "\nauth.password=script-it-7d2f\nmetrics.enabled=false\n");
        ProcessBuilder pb = new ProcessBuilder(ROOT.resolve("bin/kvs-server").toString(), conf.toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("node.log").toFile());
        pb.environment().put("KVS_JAVA_OPTS", "-Xmx128m");
        Process node = pb.start();
        try {
            assertThat(FreePorts.awaitAccepting(port, node, Duration.ofSeconds(60)))
                .as("the node started by bin/kvs-server listens (log: %s)", dir.resolve("node.log")).isTrue();
            // bin/kvs-server execs java: the script's process is the JVM.
            String cmdline = new String(Files.readAllBytes(Path.of("/proc/" + node.pid() + "/cmdline")),
                StandardCharsets.UTF_8).replace('\0', ' ');
            for (String flag : JIT_FLAGS) {
                assertThat(cmdline).as("the node's command line").contains(flag);
            }
            assertThat(cmdline.indexOf("-Xmx128m")).as("KVS_JAVA_OPTS after the JIT flags")
                .isGreaterThan(cmdline.indexOf(JIT_FLAGS.get(1)));
            Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(node.pid()), "VM.flags", "-all").redirectErrorStream(true).start();
            String flags = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(jcmd.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(flags).as("the JVM's flags").containsPattern("PerMethodTrapLimit\\s+= 0")
                .containsPattern("PerBytecodeTrapLimit\\s+= 0");
        } finally {
            node.destroy();
            if (!node.waitFor(30, TimeUnit.SECONDS)) {
                node.destroyForcibly();
            }
        }
    }

    @Test
    void theRigsImagePassesTheSameJitFlags() throws Exception {
        String entrypoint = Files.readAllLines(ROOT.resolve("docker/kvs-server/Dockerfile")).stream()
            .filter(l -> l.startsWith("ENTRYPOINT")).findFirst().orElseThrow();
        assertThat(entrypoint).contains(String.join(" ", JIT_FLAGS) + " $KVS_JAVA_OPTS");
        assertThat(Files.readString(ROOT.resolve("bin/kvs-server"))).contains("JIT_FLAGS=\"" + String.join(" ", JIT_FLAGS) + "\"");
    }
}
