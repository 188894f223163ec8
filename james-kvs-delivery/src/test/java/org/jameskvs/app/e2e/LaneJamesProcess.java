package org.jameskvs.app.e2e;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

import org.jameskvs.delivery.zone.TestZoneDnsService;

/**
 * A real James 3.8.1 (james-kvs-delivery's target/james/lib: memory app, KVS plug-in, LaneDelivery)
 * started with the test DNS zone (org.jameskvs.delivery.zone.TestZoneJamesMain, from this module's test
 * classes). Lives in the package of james-kvs-app's end-to-end harness to reuse its ChildProcess,
 * JamesConf and FreePorts.
 */
public final class LaneJamesProcess implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);

    private final ChildProcess process;
    private final int smtpPort;
    private final int webadminPort;

    private LaneJamesProcess(ChildProcess process, int smtpPort, int webadminPort) {
        this.process = process;
        this.smtpPort = smtpPort;
        this.webadminPort = webadminPort;
    }

    /** Starts James in {@code workingDirectory} with the zone file and a configuration {@code configure} adjusts. */
    static LaneJamesProcess start(Path workingDirectory, Path zone, Consumer<JamesConf> configure) throws Exception {
        Path lib = JamesProcess.lib();
        String testClasses = System.getProperty("lanes.test.classes");
        int smtpPort = FreePorts.next();
        int webadminPort = FreePorts.next();
        JamesConf conf = JamesConf.copyInto(workingDirectory).smtpPort(smtpPort).webadminPort(webadminPort);
        configure.accept(conf);
        List<String> command = List.of(
            ChildProcess.javaBinary(),
            "-Xmx768m",
            "-cp", lib.toAbsolutePath() + "/*:" + testClasses,
            "-Dworking.directory=" + workingDirectory.toAbsolutePath(),
            "-Dlogback.configurationFile=" + workingDirectory.resolve("conf/logback.xml").toAbsolutePath(),
            "-D" + TestZoneDnsService.ZONE_PROPERTY + "=" + zone.toAbsolutePath(),
            "org.jameskvs.delivery.zone.TestZoneJamesMain");
        ChildProcess process = ChildProcess.start("james", command, workingDirectory, workingDirectory.resolve("james.log"));
        LaneJamesProcess james = new LaneJamesProcess(process, smtpPort, webadminPort);
        james.awaitStarted();
        return james;
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

    String logTail(int lines) {
        return process.logTail(lines);
    }

    /** kill -9: no shutdown hook, no clean close of any queue or connection. */
    void kill() throws InterruptedException {
        process.process().destroyForcibly();
        process.process().waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
