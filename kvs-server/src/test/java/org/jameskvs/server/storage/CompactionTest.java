package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.*;

class CompactionTest {
    @TempDir
    Path dir;

    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));

    private StoreConfig config(long minAge, double ratio) {
        return StoreConfig.defaults(dir).withMinFreeDiskBytes(0).withTuning(JournalTuning.defaults()
                .withRollCycle(TestRollCycles.TEST_SECONDLY, clock).withBlockSize(1 << 20)
                .withCompaction(minAge, ratio, 32L << 20));
    }

    /** A group commit closes the journal block, so the next records start a block in the new cycle's file. */
    private void commitThenAdvance(QueueStore store, long millis) {
        assertThat(store.commit()).isEqualTo(org.jameskvs.protocol.Status.OK);
        clock.advanceMillis(millis);
    }

    @Test
    void deadFilesAreDeletedWithoutCopying() {
        try (QueueStore store = QueueStore.open(config(60_000, 0.0))) {
            QueueState q = store.create("q", 0, 0);
            for (int f = 0; f < 5; f++) {
                for (int i = 0; i < 10; i++) {
                    put(store, q, "f" + f + "-" + i, "body".repeat(100));
                }
                commitThenAdvance(store, 1000);
            }
            assertThat(store.journalFiles()).isEqualTo(5);
            long before = store.journalBytes();
            // deliver everything of the first three files; the queue's CREATE keeps file 0 alive
            for (int f = 0; f < 3; f++) {
                for (int i = 0; i < 10; i++) {
                    assertThat(store.delete(q, id("f" + f + "-" + i))).isEqualTo(org.jameskvs.protocol.Status.OK);
                }
            }
            store.maintenance();
            // 6 files: the DELETEs went to a sixth; file 0 is too young to copy the queue's CREATE forward
            assertThat(store.journalFiles()).isEqualTo(6);
            commitThenAdvance(store, 120_000);
            store.maintenance();
            // the CREATE is checkpointed into a new file; files 0-2 (only dead records left) go; 3 is all live
            assertThat(store.journalFiles()).isEqualTo(4);
            assertThat(store.journalBytes()).isLessThan(before);
            assertThat(all(store, q)).hasSize(20).startsWith("f3-0").endsWith("f4-9");
        }
    }

    @Test
    void survivorsAreCopiedForwardAndKeptAcrossRestart() {
        List<StoredMessage> expected;
        long txn;
        long latePosition;
        try (QueueStore store = QueueStore.open(config(0, 1.0))) {
            QueueState q = store.create("spool", 1000, 0);
            assertThat(store.setOwner(q, 7, "owner-1")).isEqualTo(org.jameskvs.protocol.Status.OK);
            QueueState other = store.create("other", 0, 0);
            put(store, other, "o1", "other body");
            int n = 0;
            for (int f = 0; f < 6; f++) {
                for (int i = 0; i < 20; i++) {
                    put(store, q, "m" + n, ("message " + n + " ").repeat(30));
                    n++;
                }
                commitThenAdvance(store, 1000);
            }
            // deliver all but every 7th message; retry some of the long-lived ones (REPLACE)
            for (int i = 0; i < n; i++) {
                if (i % 7 != 0) {
                    assertThat(store.delete(q, id("m" + i))).isEqualTo(org.jameskvs.protocol.Status.OK);
                } else if (i % 2 == 0) {
                    assertThat(store.replace(q, id("m" + i), 2, 1000 + i, buf("retry"))).isEqualTo(org.jameskvs.protocol.Status.OK);
                }
            }
            store.clear(other);
            expected = read(store, q, 0, 0, 0, 0).messages();
            int filesBefore = store.journalFiles();
            store.maintenance();
            assertThat(store.journalFiles()).isEqualTo(1).isLessThan(filesBefore);
            assertThat(read(store, q, 0, 0, 0, 0).messages()).isEqualTo(expected);
            txn = q.txn();
            commitThenAdvance(store, 1000);
            put(store, q, "late", "after compaction");
            latePosition = store.lastPutPosition();
            assertThat(latePosition).as("a PUT's position is its seq").isEqualTo(q.lastSeq());
            assertThat(store.delete(q, id("late"))).isEqualTo(org.jameskvs.protocol.Status.OK);
            txn += 2;
        }
        try (QueueStore store = QueueStore.open(config(0, 1.0))) {
            assertThat(store.recoveryProblems()).isEmpty();
            QueueState q = store.queue("spool");
            assertThat(read(store, q, 0, 0, 0, 0).messages()).isEqualTo(expected);
            assertThat(q.txn()).isEqualTo(txn);
            assertThat(q.epoch()).isEqualTo(7);
            assertThat(q.owner()).isEqualTo("owner-1");
            assertThat(q.maxMessages()).isEqualTo(1000);
            assertThat(q.nextPosition()).isEqualTo(latePosition + 1);
            assertThat(store.queue("other").size()).isZero();
            assertThat(store.queue("other").txn()).isEqualTo(2);
            // Chronicle keeps working after its old files went: write, roll, compact, reopen again
            commitThenAdvance(store, 5000);
            put(store, q, "new", "x");
            store.maintenance();
            expected = new ArrayList<>(read(store, q, 0, 0, 0, 0).messages());
        }
        try (QueueStore store = QueueStore.open(config(0, 1.0))) {
            assertThat(store.recoveryProblems()).isEmpty();
            assertThat(read(store, store.queue("spool"), 0, 0, 0, 0).messages()).isEqualTo(expected);
            assertThat(store.journalFiles()).isEqualTo(1);
        }
    }

    @Test
    void droppedQueueDoesNotComeBackAfterCompaction() {
        try (QueueStore store = QueueStore.open(config(0, 1.0))) {
            QueueState a = store.create("a", 0, 0);
            put(store, a, "x", "y");
            commitThenAdvance(store, 1000);
            QueueState b = store.create("b", 0, 0);
            put(store, b, "x", "y");
            assertThat(store.drop(a)).isEqualTo(org.jameskvs.protocol.Status.OK);
            commitThenAdvance(store, 1000);
            put(store, b, "z", "w");
            store.maintenance();
            assertThat(store.journalFiles()).isEqualTo(1);
        }
        try (QueueStore store = QueueStore.open(config(0, 1.0))) {
            assertThat(store.queue("a")).isNull();
            assertThat(all(store, store.queue("b"))).containsExactly("x", "z");
        }
    }
}
