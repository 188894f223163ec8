package org.jameskvs.server;

import org.jameskvs.testkit.KvsServerProcess;

import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Payloads live off-heap, proven on a real process: far more message bytes than the server's heap
 * cap are stored, the server's live heap (measured after a full GC) stays well below the cap, and
 * after kill -9 a restart under the same cap serves every message again, in order, byte-exact. The
 * live heap after a GC is what must stay small: a heap that merely did not blow up proves nothing,
 * since the JVM cannot exceed its cap anyway.
 * <ul>
 * <li>CI: 200,000 x 1 KB (200 MB) under {@code -Xmx64m};</li>
 * <li>slow ({@code mvn -pl kvs-server test -Pslow -Dtest=CapacityProcessTest}): 1,000,000 x 1 KB
 *     (1 GB) under {@code -Xmx256m}.</li>
 * </ul>
 */
class CapacityProcessTest {
    private static final String PASSWORD = "cap";
    /** The histogram's last line: {@code Total <instances> <bytes>}. */
    private static final Pattern HISTOGRAM_TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");
    /** "Well below the cap": the live heap may use at most this share of it. */
    private static final double MAX_SHARE_OF_CAP = 0.5;
    @TempDir
    Path dir;

    @Test
    void twoHundredMegabytesInA64MegabyteHeapAndBackAfterKillDashNine() throws Exception {
        storeKillAndServeAgain(Integer.getInteger("capacity.ci.messages", 200_000), 64);
    }

    @Tag("slow")
    @Test
    void oneGigabyteInA256MegabyteHeapAndBackAfterKillDashNine() throws Exception {
        storeKillAndServeAgain(Integer.getInteger("capacity.messages", 1_000_000), 256);
    }

    private void storeKillAndServeAgain(int n, int capMb) throws Exception {
        int size = 1024;
        String cap = capMb + "m";
        try (KvsServerProcess server = KvsServerProcess.in(dir).password(PASSWORD).maxHeap(cap).fromClassPath().start();
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("big", OpenMode.WRITE, 1);
            long t0 = System.nanoTime();
            assertThat(PutSequence.pipelinedPuts(c, h, "m", n, size)).as("puts acknowledged").isEqualTo(n);
            double secs = (System.nanoTime() - t0) / 1e9;
            RawClient.Response stat = c.simple(Opcode.STAT, h);
            assertThat(stat.status()).isEqualTo(Status.OK);
            assertThat(stat.payload().readLong()).isEqualTo(n);
            double liveMb = liveHeapBytesAfterGc(server.pid()) / (1024.0 * 1024);
            System.out.printf("capacity: %,d x 1 KB stored in %.1f s (%.0f puts/s, one connection, windows of 1,000); "
                    + "server live heap after a full GC %.1f MB of a %d MB cap%n", n, secs, n / secs, liveMb, capMb);
            assertThat(liveMb).as("live heap (MB) after a GC, with %,d MB of bodies stored", n * (long) size >> 20)
                    .isLessThan(capMb * MAX_SHARE_OF_CAP);
            server.kill9();
        }
        long t0 = System.nanoTime();
        try (KvsServerProcess server = KvsServerProcess.in(dir).password(PASSWORD).maxHeap(cap).fromClassPath().start();
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            double restart = (System.nanoTime() - t0) / 1e9;
            int h = c.open("big", OpenMode.WRITE, 1);
            int served = PutSequence.readBackInOrder(c, h, "m", size);
            double liveMb = liveHeapBytesAfterGc(server.pid()) / (1024.0 * 1024);
            System.out.printf("capacity: after kill -9, restart to listening %.1f s; all %,d read back in order;"
                    + " live heap after a full GC %.1f MB of %d MB%n", restart, served, liveMb, capMb);
            assertThat(served).isEqualTo(n);
            assertThat(liveMb).as("live heap (MB) after recovery").isLessThan(capMb * MAX_SHARE_OF_CAP);
        }
    }

    /**
     * Bytes of live objects in the server's heap: {@code jcmd GC.class_histogram} runs a full GC and
     * counts only what survived it, so this is the heap the server needs, not garbage waiting for a
     * collection.
     */
    private static long liveHeapBytesAfterGc(long pid) throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid), "GC.class_histogram").redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
            throw new IOException("jcmd GC.class_histogram failed: " + out);
        }
        Matcher m = HISTOGRAM_TOTAL.matcher(out);
        if (!m.find()) {
            throw new IOException("no Total line in the class histogram: " + out.lines().limit(5).toList());
        }
        return Long.parseLong(m.group(1));
    }
}
