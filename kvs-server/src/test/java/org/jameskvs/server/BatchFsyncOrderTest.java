package org.jameskvs.server;

import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.storage.FsyncObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code fsync.policy=batch}: an OK leaves the server only after the fsync of its block returned.
 * The fsync of a PUT's block is held inside (an {@link FsyncObserver} that blocks until released;
 * it recognises that fsync by the PUT's body in the journal, so an fsync still pending from an
 * earlier request is not mistaken for it): while it is held, no byte of an answer may have reached
 * the client; once released, the OK comes.
 * A server that flushed answers before (or without) the fsync fails here: its answer would already
 * be in the client's socket when the fsync is seen to start (on loopback a write is in the
 * receiver's queue when it returns, and the server writes before it fsyncs on the same thread).
 */
class BatchFsyncOrderTest {
    private static final String PASSWORD = "batch";
    private static final String MARKER = "held-fsync-body-7f3a";
    @TempDir
    Path dir;

    /** Whether the journal files, up to their last record, hold the marker. */
    private static boolean journalHolds(Map<Path, Long> ends, String marker) {
        byte[] m = marker.getBytes(StandardCharsets.UTF_8);
        for (Map.Entry<Path, Long> e : ends.entrySet()) {
            try (FileChannel ch = FileChannel.open(e.getKey(), StandardOpenOption.READ)) {
                ByteBuffer b = ByteBuffer.allocate((int) Math.min(e.getValue(), 16 << 20));
                while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                    // read the data part
                }
                byte[] a = b.array();
                outer:
                for (int i = 0; i + m.length <= b.position(); i++) {
                    for (int j = 0; j < m.length; j++) {
                        if (a[i + j] != m[j]) {
                            continue outer;
                        }
                    }
                    return true;
                }
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        return false;
    }

    @AfterEach
    void uninstall() {
        FsyncObserver.install(null);
    }

    private ServerConfig config(String policy) {
        Properties p = ServerConfig.testProperties(dir, PASSWORD);
        p.setProperty("fsync.policy", policy);
        return ServerConfig.fromProperties(p);
    }

    @Test
    void anOkLeavesOnlyAfterItsBlocksFsyncReturned() throws Exception {
        AtomicBoolean held = new AtomicBoolean();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        FsyncObserver.install((directory, ends) -> {
            if (!held.get() && journalHolds(ends, MARKER)) {
                held.set(true);
                inside.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        try (KvsServer server = KvsServer.start(config("batch"));
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            c.send(b -> Requests.put(b, 1000, h, "m1".getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0],
                    MARKER.getBytes(StandardCharsets.UTF_8)));
            assertThat(inside.await(30, TimeUnit.SECONDS)).as("the PUT's block reached its fsync").isTrue();
            assertThat(c.socket.getInputStream().available())
                    .as("answer bytes received while the block's fsync is held").isZero();
            release.countDown();
            RawClient.Response r = c.receive();
            assertThat(r.sequence()).isEqualTo(1000);
            assertThat(r.status()).isEqualTo(Status.OK);
        }
    }

    /** {@code kvs_fsyncs_total} counts the journal's fsyncs: with batch, one per block that holds a mutation. */
    @Test
    void theFsyncMetricCountsEachBlocksFsync() throws Exception {
        try (KvsServer server = KvsServer.start(config("batch"));
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            long before = server.store().fsyncs();
            assertThat(c.put(h, "m1", "body").status()).isEqualTo(Status.OK);
            assertThat(c.call(b -> Requests.delete(b, 5000, h, "m1".getBytes(StandardCharsets.UTF_8))).status())
                    .isEqualTo(Status.OK);
            assertThat(server.store().fsyncs() - before).as("fsyncs for a PUT and a DELETE sent one after the other")
                    .isEqualTo(2);
            assertThat(server.metrics().scrape()).contains("kvs_fsyncs_total " + (double) server.store().fsyncs());
        }
    }
}
