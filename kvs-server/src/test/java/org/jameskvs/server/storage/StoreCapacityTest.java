package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures what the storage brief sets targets for: heap with 1,000,000 live 1 KB messages
 * (target &lt;= 256 MB), recovery time of 500,000 live 1 KB messages (target: a few seconds), and
 * put throughput. Writes ~1 GB of journal, so it is off by default: run with
 * {@code mvn -pl kvs-server test -Pslow -Dtest=StoreCapacityTest} (tag "slow" is excluded from the default run).
 */
@Tag("slow")
class StoreCapacityTest {
    @TempDir
    Path dir;

    private static long usedHeapAfterGc() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }

    private static byte[] id(int i) {
        return ("msg-" + i + "@mail.example.org").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void heapRecoveryAndThroughput() throws Exception {
        StoreConfig config = StoreConfig.defaults(dir).withMinFreeDiskBytes(0);
        ByteBuf body = Unpooled.directBuffer(1024).writeBytes(new byte[1024]);
        ByteBuf state = Unpooled.wrappedBuffer("retries=0".getBytes(StandardCharsets.UTF_8));
        long baseline = usedHeapAfterGc();

        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("spool", 0, 0);
            long t0 = System.nanoTime();
            for (int i = 0; i < 500_000; i++) {
                assertThat(store.put(q, id(i), 0, 0, state, body)).isEqualTo(Status.OK);
                if (i % 100 == 99) {
                    store.commit();
                }
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf("PUT throughput: 500000 x 1KB in %.2f s = %.0f puts/s (FsyncPolicy.NONE, commit every 100)%n",
                    secs, 500_000 / secs);
        }

        long t1 = System.nanoTime();
        try (QueueStore store = QueueStore.open(config)) {
            double ms = (System.nanoTime() - t1) / 1e6;
            System.out.printf("RECOVERY: open with 500000 live 1KB messages took %.0f ms (replay %d ms)%n", ms,
                    store.recoveryMillis());
            QueueState q = store.queue("spool");
            assertThat(q.size()).isEqualTo(500_000);
            for (int i = 500_000; i < 1_000_000; i++) {
                assertThat(store.put(q, id(i), 0, 0, state, body)).isEqualTo(Status.OK);
            }
            long used = usedHeapAfterGc();
            System.out.printf("HEAP: 1000000 live 1KB messages: %.1f MB used after GC (%.1f MB above the %.1f MB baseline), %.0f bytes/message%n",
                    used / 1e6, (used - baseline) / 1e6, baseline / 1e6, (used - baseline) / 1e6);
            assertThat(used - baseline).isLessThan(256L << 20);
            ByteBuf out = Unpooled.directBuffer(2048);
            long t2 = System.nanoTime();
            for (int i = 0; i < 1_000_000; i += 7) {
                out.clear();
                assertThat(store.get(q, id(i), out)).isEqualTo(Status.OK);
            }
            System.out.printf("GET: %.2f us/op%n", (System.nanoTime() - t2) / 1e3 / (1_000_000 / 7));
            long t3 = System.nanoTime();
            ByteBuf rb = Unpooled.directBuffer(200 << 10);
            long from = 0;
            int n = 0;
            while (n < 100_000) {
                rb.clear();
                assertThat(store.read(q, from, 100, 1 << 20, 0, rb)).isEqualTo(Status.OK);
                from = rb.getLong(0);
                n += rb.getInt(8);
            }
            System.out.printf("READ: %.2f us/message in blocks of 100%n", (System.nanoTime() - t3) / 1e3 / n);
            long t4 = System.nanoTime();
            for (int i = 0; i < 1_000_000; i += 2) {
                assertThat(store.delete(q, id(i))).isEqualTo(Status.OK);
            }
            System.out.printf("DELETE: %.2f us/op%n", (System.nanoTime() - t4) / 1e3 / 500_000);
        }
        long t5 = System.nanoTime();
        try (QueueStore store = QueueStore.open(config)) {
            System.out.printf("RECOVERY: 1000000 puts + 500000 deletes (500000 live) took %.0f ms%n",
                    (System.nanoTime() - t5) / 1e6);
            assertThat(store.queue("spool").size()).isEqualTo(500_000);
            long used = usedHeapAfterGc();
            System.out.printf("HEAP after recovery of 500000 live: %.1f MB above baseline%n", (used - baseline) / 1e6);
        }
    }
}
