package org.jameskvs.server;

import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue targets on a real process: 1 GB of stored 1 KB messages in a server whose heap is capped
 * at 256 MB (payloads live off-heap: it would die of OutOfMemoryError otherwise), with the heap
 * read from its own metrics endpoint; then kill -9 and a restart that brings every message back.
 * Slow (about a minute): {@code mvn -pl kvs-server test -Pslow -Dtest=CapacityProcessTest}.
 */
@Tag("slow")
class CapacityProcessTest {
    private static final String PASSWORD = "cap";
    @TempDir
    Path dir;

    @Test
    void oneGigabyteInA256MegabyteHeapAndBackAfterKillDashNine() throws Exception {
        int n = Integer.getInteger("capacity.messages", 1_000_000);
        int metricsPort = org.jameskvs.server.ServerProcessPorts.free();
        double heapMb;
        try (ServerProcess server = ServerProcess.start(dir, PASSWORD, "metrics.enabled=true",
                "metrics.port=" + metricsPort);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("big", OpenMode.WRITE, 1);
            long t0 = System.nanoTime();
            assertThat(KillDashNineTest.pipelinedPuts(c, h, n, 1024)).isEqualTo(n);
            double secs = (System.nanoTime() - t0) / 1e9;
            RawClient.Response stat = c.simple(Opcode.STAT, h);
            assertThat(stat.status()).isEqualTo(Status.OK);
            assertThat(stat.payload().readLong()).isEqualTo(n);
            heapMb = heapUsedMb(metricsPort);
            System.out.printf("capacity: %,d x 1 KB stored in %.1f s (%.0f puts/s, one connection, windows of 1,000); "
                    + "server heap used %.0f MB of a 256 MB cap%n", n, secs, n / secs, heapMb);
            server.kill9();
        }
        assertThat(heapMb).isLessThan(256);
        long t0 = System.nanoTime();
        try (ServerProcess server = ServerProcess.start(dir, PASSWORD);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            double restart = (System.nanoTime() - t0) / 1e9;
            int h = c.open("big", OpenMode.WRITE, 1);
            RawClient.Response stat = c.simple(Opcode.STAT, h);
            assertThat(stat.payload().readLong()).isEqualTo(n);
            System.out.printf("capacity: after kill -9, restart to serving %,d messages took %.1f s%n", n, restart);
        }
    }

    /** Sum of the heap pools' used bytes after the server's own metrics, in MB. */
    private static double heapUsedMb(int port) throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("jvm_memory_used_bytes\\{area=\"heap\",[^}]*} ([0-9.E+-]+)").matcher(body);
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(1));
        }
        assertThat(sum).as("heap metrics present").isPositive();
        return sum / (1024 * 1024);
    }
}
