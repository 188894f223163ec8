package org.jameskvs.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.jameskvs.testkit.james.JamesProcess;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.junit.jupiter.api.Test;

/**
 * The README's install into an existing James 3.8.1 memory app: James's own layout (its
 * {@code james-server-memory-app.jar}, whose manifest names every library as
 * {@code james-server-memory-app.lib/<jar>}, beside that folder), the plug-in's jars added to the
 * folder, netty 4.1.86 replaced there by 4.1.115, and James started with
 * {@code -cp 'james-server-memory-app.jar:james-server-memory-app.lib/*'}: it runs the KVS spool with two
 * copies and relays every mail once.
 */
class ExistingJamesInstallE2ETest {
    private static final String APP = "james-server-memory-app";
    private static final int MAILS = 50;

    @Test
    void theJarsAddedToAStockLayoutRunTheSpool() throws Exception {
        Path install = Path.of(System.getProperty("e2e.workdir", "target/e2e")).toAbsolutePath()
            .resolve("stock-install-" + System.currentTimeMillis());
        Path libFolder = Files.createDirectories(install.resolve(APP + ".lib"));
        Path lib = JamesProcess.lib();
        try (Stream<Path> jars = Files.list(lib)) {
            for (Path jar : jars.toList()) {
                String name = jar.getFileName().toString();
                if (name.startsWith(APP + "-")) {
                    Files.copy(jar, install.resolve(APP + ".jar")); // the distribution's name for it
                } else {
                    Files.copy(jar, libFolder.resolve(name));
                }
            }
        }
        try (JarFile app = new JarFile(install.resolve(APP + ".jar").toFile())) {
            String classPath = app.getManifest().getMainAttributes().getValue("Class-Path");
            assertThat(classPath).as("the stock jar's manifest names its libraries in the .lib folder")
                .contains(APP + ".lib/netty-codec-4.1.86.Final.jar");
        }
        try (Stream<Path> jars = Files.list(libFolder)) {
            List<String> names = jars.map(p -> p.getFileName().toString()).toList();
            assertThat(names).as("netty replaced").anyMatch(n -> n.matches("netty-codec-4\\.1\\.115\\.Final\\.jar"))
                .noneMatch(n -> n.contains("4.1.86.Final"));
            assertThat(names).as("the plug-in's jars added").anyMatch(n -> n.startsWith("james-kvs-spool-"))
                .anyMatch(n -> n.startsWith("james-kvs-app-")).anyMatch(n -> n.startsWith("kvs-replication-"));
        }

        String classpath = install.resolve(APP + ".jar") + ":" + libFolder + "/*";
        try (ReplicatedJames rig = ReplicatedJames.start("stock-install", classpath, new String[0], new String[0], conf -> { })) {
            SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", rig.james.smtpPort(), 60_000)
                .send(MAILS, 4, "rcpt@sink.test", "stock-install");
            assertThat(sent.accepted()).as(sent.summary()).isEqualTo(MAILS);
            List<String> ids = IntStream.range(0, MAILS).mapToObj(i -> SmtpLoadSender.messageId("stock-install", i)).toList();
            assertThat(rig.sink.awaitAll(ids, Duration.ofSeconds(120))).as(rig.james.logTail(40)).isEmpty();
            assertThat(rig.james.logText()).as("the replication layer is the one in use").contains("replication: connected to node2");
            assertThat(ids).allSatisfy(id -> assertThat(rig.sink.count(id)).as("deliveries of %s", id).isEqualTo(1));
        }
    }
}
