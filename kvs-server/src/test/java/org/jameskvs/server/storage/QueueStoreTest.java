package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.*;

class QueueStoreTest {
    @TempDir
    Path dir;

    private StoreConfig config() {
        return StoreConfig.defaults(dir).withMinFreeDiskBytes(0);
    }

    /** Found by the simulation, which reopens stores thousands of times in one JVM: close released nothing off-heap. */
    @Test
    void closeReleasesTheStoresOffHeapBuffer() {
        QueueStore store = QueueStore.open(config());
        io.netty.buffer.ByteBuf buffer = store.records.copyBuffer;
        assertThat(buffer.refCnt()).isEqualTo(1);
        store.close();
        assertThat(buffer.refCnt()).as("released by close").isZero();
    }

    @Test
    void putGetDeleteReplace() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("spool", 0, 0);
            assertThat(q.nextPosition()).isEqualTo(1);
            assertThat(store.put(q, id("a"), 7, 1234, buf("state-a"), buf("body-a"))).isEqualTo(Status.OK);
            assertThat(q.nextPosition()).isEqualTo(2);
            assertThat(q.size()).isEqualTo(1);
            assertThat(q.bytes()).isEqualTo(6);
            assertThat(q.txn()).isEqualTo(1);

            StoredMessage m = get(store, q, "a");
            assertThat(m).isEqualTo(new StoredMessage(1, id("a"), 7, 1234, id("state-a"), id("body-a")));

            assertThat(store.replace(q, id("a"), 3, 99, buf("retry=1, a longer state than before"))).isEqualTo(Status.OK);
            assertThat(get(store, q, "a")).isEqualTo(new StoredMessage(1, id("a"), 3, 99,
                    id("retry=1, a longer state than before"), id("body-a")));
            assertThat(q.earliestNotBefore()).isEqualTo(99);
            assertThat(q.txn()).isEqualTo(2);

            assertThat(store.delete(q, id("a"))).isEqualTo(Status.OK);
            assertThat(get(store, q, "a")).isNull();
            assertThat(store.delete(q, id("a"))).isEqualTo(Status.NOT_FOUND);
            assertThat(store.replace(q, id("a"), 1, 1, buf(""))).isEqualTo(Status.NOT_FOUND);
            assertThat(q.size()).isZero();
            assertThat(q.bytes()).isZero();
            assertThat(q.firstPosition()).isEqualTo(q.nextPosition());
            assertThat(q.earliestNotBefore()).isEqualTo(Long.MAX_VALUE);
            assertThat(q.txn()).isEqualTo(3);
        }
    }

    @Test
    void duplicateIdIsRefusedWhileLiveAndAllowedAfterDelete() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            put(store, q, "x", "one");
            assertThat(store.put(q, id("x"), 1, 0, buf(""), buf("two"))).isEqualTo(Status.DUPLICATE_ID);
            assertThat(q.txn()).isEqualTo(1);
            assertThat(q.size()).isEqualTo(1);
            QueueState other = store.create("other", 0, 0);
            put(store, other, "x", "same id, other queue");
            assertThat(store.delete(q, id("x"))).isEqualTo(Status.OK);
            put(store, q, "x", "three");
            assertThat(str(get(store, q, "x").body())).isEqualTo("three");
            assertThat(get(store, q, "x").position()).as("its seq: put, delete, put").isEqualTo(3);
        }
    }

    @Test
    void readKeepsOrderAndAppliesFiltersAndLimits() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            for (int i = 1; i <= 10; i++) {
                // odd messages are deferred until t=1000
                assertThat(store.put(q, id("m" + i), 0, i % 2 == 1 ? 1000 : 0, buf(""), buf("0123456789")))
                        .isEqualTo(Status.OK);
            }
            assertThat(all(store, q)).containsExactly("m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10");

            ReadResult r = read(store, q, 0, 3, 0, 0);
            assertThat(r.ids()).containsExactly("m1", "m2", "m3");
            assertThat(r.nextPosition()).isEqualTo(4);
            r = read(store, q, r.nextPosition(), 3, 0, 0);
            assertThat(r.ids()).containsExactly("m4", "m5", "m6");

            // maxBytes: 25 bytes of bodies fit two 10-byte bodies
            r = read(store, q, 0, 0, 25, 0);
            assertThat(r.ids()).containsExactly("m1", "m2");
            assertThat(r.nextPosition()).isEqualTo(3);
            // at least one message even if it alone exceeds maxBytes
            assertThat(read(store, q, 0, 0, 1, 0).ids()).containsExactly("m1");

            // readyBefore filters not-yet-due messages
            r = read(store, q, 0, 0, 0, 500);
            assertThat(r.ids()).containsExactly("m2", "m4", "m6", "m8", "m10");
            assertThat(r.nextPosition()).isEqualTo(q.nextPosition());
            assertThat(read(store, q, 0, 2, 0, 500).ids()).containsExactly("m2", "m4");

            // deletes leave holes that READ skips
            assertThat(store.delete(q, id("m2"))).isEqualTo(Status.OK);
            assertThat(store.delete(q, id("m1"))).isEqualTo(Status.OK);
            assertThat(q.firstPosition()).isEqualTo(3);
            assertThat(read(store, q, 2, 2, 0, 0).ids()).containsExactly("m3", "m4");
            assertThat(read(store, q, 100, 2, 0, 0).ids()).isEmpty();
            // ready-at-once messages (notBefore 0) do not count: the earliest DELAYED one does
            assertThat(q.earliestNotBefore()).isEqualTo(1000);
        }
    }

    @Test
    void queueFullByCountAndBytes() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("small", 2, 1_000_000);
            put(store, q, "1", "a");
            put(store, q, "2", "b");
            assertThat(store.put(q, id("3"), 0, 0, buf(""), buf("c"))).isEqualTo(Status.QUEUE_FULL);
            assertThat(q.size()).isEqualTo(2);
            assertThat(q.txn()).isEqualTo(2);

            QueueState b = store.create("bytes", 100, 10);
            put(store, b, "1", "12345678");
            assertThat(store.put(b, id("2"), 0, 0, buf(""), buf("123"))).isEqualTo(Status.QUEUE_FULL);
            put(store, b, "3", "12");
            // raising the limits on an existing queue
            assertThat(store.create("small", 3, 0).maxMessages()).isEqualTo(3);
            put(store, q, "3", "c");
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.queue("small").maxMessages()).isEqualTo(3);
            assertThat(store.queue("bytes").maxBytes()).isEqualTo(10);
        }
    }

    @Test
    void diskFullWhenJournalLimitReachedLeavesIndexUnchanged() {
        try (QueueStore store = QueueStore.open(config().withMaxJournalBytes(200_000))) {
            QueueState q = store.create("q", 0, 0);
            byte[] body = new byte[10_000];
            int ok = 0;
            Status s;
            while ((s = store.put(q, id("m" + ok), 0, 0, buf(""), buf(body))) == Status.OK) {
                ok++;
                assertThat(ok).isLessThan(100);
            }
            assertThat(s).isEqualTo(Status.DISK_FULL);
            assertThat(ok).isPositive();
            assertThat(q.size()).isEqualTo(ok);
            assertThat(q.txn()).isEqualTo(ok);
            assertThat(get(store, q, "m" + ok)).isNull();
            // deletes are small and still allowed? they need space too: a tiny record may still fit
            assertThat(all(store, q)).hasSize(ok);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.queue("q").size()).isGreaterThan(0);
            assertThat(store.put(store.queue("q"), id("after"), 0, 0, buf(""), buf("x"))).isEqualTo(Status.OK);
        }
    }

    @Test
    void diskFullWhenFreeSpaceBelowMinimum() {
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir).withMinFreeDiskBytes(Long.MAX_VALUE / 2))) {
            QueueState q = store.create("q", 0, 0);
            assertThat(q).isNull();
            assertThat(store.lastError()).contains("free disk");
        }
    }

    @Test
    void restartPreservesQueuesOrderTxnOwnerAndState() {
        List<StoredMessage> before;
        long txn;
        try (QueueStore store = QueueStore.open(config().withFsync(FsyncPolicy.BATCH))) {
            QueueState q = store.create("spool", 50, 0);
            for (int i = 0; i < 20; i++) {
                assertThat(store.put(q, id("id-" + i), i % 3, i * 10L, buf("st" + i), buf("body " + i)))
                        .isEqualTo(Status.OK);
            }
            assertThat(store.delete(q, id("id-0"))).isEqualTo(Status.OK);
            assertThat(store.delete(q, id("id-7"))).isEqualTo(Status.OK);
            assertThat(store.replace(q, id("id-3"), 9, 5, buf("replaced"))).isEqualTo(Status.OK);
            assertThat(store.setOwner(q, 42, "node-a")).isEqualTo(Status.OK);
            QueueState cleared = store.create("cleared", 0, 0);
            put(store, cleared, "gone", "x");
            assertThat(store.clear(cleared)).isEqualTo(Status.OK);
            QueueState dropped = store.create("dropped", 0, 0);
            put(store, dropped, "gone", "x");
            assertThat(store.drop(dropped)).isEqualTo(Status.OK);
            assertThat(store.put(dropped, id("y"), 0, 0, buf(""), buf(""))).isEqualTo(Status.NO_SUCH_QUEUE);
            assertThat(store.commit()).isEqualTo(Status.OK);
            before = read(store, q, 0, 0, 0, 0).messages();
            txn = q.txn();
            assertThat(txn).isEqualTo(20 + 2 + 1 + 1);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            QueueState q = store.queue("spool");
            assertThat(q.txn()).isEqualTo(txn);
            assertThat(q.epoch()).isEqualTo(42);
            assertThat(q.owner()).isEqualTo("node-a");
            assertThat(q.maxMessages()).isEqualTo(50);
            assertThat(q.size()).isEqualTo(18);
            assertThat(q.nextPosition()).isEqualTo(21);
            assertThat(q.firstPosition()).isEqualTo(2);
            assertThat(read(store, q, 0, 0, 0, 0).messages()).isEqualTo(before);
            assertThat(get(store, q, "id-3").state()).isEqualTo(id("replaced"));
            assertThat(store.queue("cleared").size()).isZero();
            assertThat(store.queue("cleared").txn()).isEqualTo(2);
            assertThat(store.queue("dropped")).isNull();
            assertThat(store.queues()).extracting(QueueState::name).containsExactlyInAnyOrder("spool", "cleared");
            // positions continue (a PUT's position is its seq: 20 puts, 2 deletes, a replace, this put),
            // ids can be reused after delete
            put(store, q, "id-0", "again");
            assertThat(store.lastPutPosition()).isEqualTo(q.lastSeq()).isEqualTo(20 + 2 + 1 + 1);
            assertThat(q.nextPosition()).isEqualTo(20 + 2 + 1 + 1 + 1);
            assertThat(store.put(q, id("id-5"), 0, 0, buf(""), buf(""))).isEqualTo(Status.DUPLICATE_ID);
        }
    }

    @Test
    void manyMessagesWithDirectBuffersAndGrowth() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 5000; i++) {
                ByteBuf body = Unpooled.directBuffer(300).writeBytes(("body-" + i).repeat(20).getBytes());
                assertThat(store.put(q, id("k" + i), 0, 0, Unpooled.EMPTY_BUFFER, body)).isEqualTo(Status.OK);
                body.release(); // the store copies; the caller owns the buffer
                if (i % 3 == 0) {
                    assertThat(store.delete(q, id("k" + (i / 2)))).isIn(Status.OK, Status.NOT_FOUND);
                }
            }
            for (int i = 0; i < 5000; i++) {
                if (get(store, q, "k" + i) != null) {
                    expected.add("k" + i);
                }
            }
            assertThat(all(store, q)).containsExactlyElementsOf(expected);
            assertThat(q.size()).isEqualTo(expected.size());
        }
    }
}
