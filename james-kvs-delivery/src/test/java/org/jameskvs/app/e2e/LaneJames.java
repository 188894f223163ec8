package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.delivery.zone.TestZoneDnsService;

/**
 * The end-to-end tests' James with LaneDelivery: james-kvs-app's JamesProcess (this module's pom points
 * {@code james.lib} at target/james-test/lib and {@code james.main} at the test DNS zone main), with the
 * target's zone written into its conf/. Lives in the package of that harness to reuse it.
 */
final class LaneJames {
    private LaneJames() {
    }

    static JamesProcess start(Path workingDirectory, DomainSmtpTarget target, Consumer<JamesConf> configure) throws Exception {
        Path conf = Files.createDirectories(workingDirectory.resolve("conf"));
        Files.writeString(conf.resolve(TestZoneDnsService.ZONE_FILE), target.zone());
        return JamesProcess.start(workingDirectory, "kvs", target.port(), configure);
    }

    /** kill -9 of the James started in {@code workingDirectory} (this JVM's child, found by its command line). */
    static void kill(Path workingDirectory) throws InterruptedException {
        String marker = "-Dworking.directory=" + workingDirectory.toAbsolutePath();
        for (ProcessHandle child : ProcessHandle.current().children().toList()) {
            if (child.info().commandLine().orElse("").contains(marker)) {
                child.destroyForcibly();
                child.onExit().join();
                return;
            }
        }
        throw new IllegalStateException("no James child process with " + marker);
    }

    interface Check {
        boolean holds() throws Exception;
    }

    /** Waits until {@code check} holds; fails naming {@code what} (with James's log tail) after {@code timeout}. */
    static void awaitOrFail(Check check, String what, Duration timeout, JamesProcess james) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        while (!check.holds()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("not within " + timeout + ": " + what + "\n" + james.logTail(60));
            }
            Thread.sleep(100);
        }
    }
}
