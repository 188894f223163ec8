package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * The README's main command, {@code bin/demo}, run as an operator runs it (two KVS nodes, James with
 * the plug-in, the sink, all on 127.0.0.1): every mail accepted is delivered once, and the run's KVS
 * password is its own. The shipped configurations hold no usable password; the demo writes 64 hex
 * digits from /dev/urandom into {@code demo-data/kvs-password} (readable by its owner only), gives the
 * nodes its path and James its value, and never prints it; a second run gets another one.
 */
class DemoScriptIT {
    private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
    private static final Path DATA = ROOT.resolve("demo-data");
    private static final int MAILS = 40;

    @Test
    void theDemoRelaysEveryMailOnceWithAPasswordOfItsOwn() throws Exception {
        String first = runDemo(1);
        String second = runDemo(2);
        assertThat(second).as("each run generates its own password").isNotEqualTo(first);
    }

    /** Runs bin/demo (bounded), checks its summary and its password handling; returns the run's password. */
    private static String runDemo(int run) throws Exception {
        Path log = Files.createTempFile("demo-it-", ".log");
        ProcessBuilder pb = new ProcessBuilder(ROOT.resolve("bin/demo").toString(), Integer.toString(MAILS))
            .directory(ROOT.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("DEMO_MAILS");
        pb.environment().remove("DEMO_QUEUE");
        pb.environment().remove("DEMO_REPLICATED");
        pb.environment().remove("DEMO_KVS_SERVERS");
        Process demo = pb.start();
        boolean ended = demo.waitFor(15, TimeUnit.MINUTES);
        if (!ended) {
            demo.destroy(); // its EXIT trap stops what it started
            demo.waitFor(2, TimeUnit.MINUTES);
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(ended).as("bin/demo ended within 15 min (run %d):\n%s", run, out).isTrue();
        assertThat(demo.exitValue()).as("bin/demo's exit status (run %d):\n%s", run, out).isZero();
        assertThat(out).as("run %d", run).containsPattern("queue\\s+kvs; KVS: replicated, two copies")
            .containsPattern("accepted \\(250 to DATA\\)\\s+" + MAILS + "\\n")
            .containsPattern("delivered to the sink \\(distinct\\)\\s+" + MAILS + " ")
            .containsPattern("duplicates\\s+0\\n");

        Path passwordFile = DATA.resolve("kvs-password");
        List<String> lines = Files.readAllLines(passwordFile);
        assertThat(lines).as("the run's password file").hasSize(1);
        String password = lines.get(0);
        assertThat(password).as("64 hex digits").matches("[0-9a-f]{64}");
        assertThat(Files.getPosixFilePermissions(passwordFile)).as("readable by its owner only")
            .isEqualTo(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
        assertThat(out).as("the password is never printed").doesNotContain(password);
        for (int n = 1; n <= 2; n++) {
            String node = Files.readString(DATA.resolve("node" + n).resolve("kvs-server.properties"));
            assertThat(node).as("node %d's configuration", n).contains("auth.passwordFile=" + passwordFile)
                .doesNotContainPattern("(?m)^auth\\.password=\\S");
        }
        String james = Files.readString(DATA.resolve("james/conf/kvs-spool.properties"));
        assertThat(james.lines().filter(l -> l.startsWith("password=")).toList()).as("James's kvs-spool.properties")
            .containsExactly("password=" + password);
        for (String shipped : List.of("conf/kvs-server.properties", "james-conf/kvs-spool.properties")) {
            assertThat(Files.readString(ROOT.resolve(shipped))).as("shipped %s", shipped).doesNotContain(password)
                .doesNotContainPattern("(?m)^(auth\\.)?password=\\S");
        }
        return password;
    }
}
