package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/**
 * The queue's commit point in the store ({@link QueueStore#commitPoint}): READ and GET with the
 * read handles' limit ({@link QueueStore#visibleLimit}) show no user message above it, it only
 * rises and never above the last seq, and it survives a restart and compaction (its COMMIT record).
 */
class CommitPointStoreTest {
    @TempDir
    Path dir;

    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));

    private StoreConfig config() {
        return StoreConfig.defaults(dir).withMinFreeDiskBytes(0).withTuning(JournalTuning.defaults()
                .withRollCycle(TestRollCycles.TEST_SECONDLY, clock).withBlockSize(1 << 20)
                .withCompaction(0, 1.0, 32L << 20));
    }

    @Test
    void aReadHandleSeesNothingAboveTheCommitPointAndItSurvivesRestartAndCompaction() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            for (int i = 1; i <= 5; i++) {
                put(store, q, "m" + i, "body " + i); // positions 1..5 (a PUT's position is its seq)
            }
            assertThat(QueueStore.visibleLimit(q)).as("never declared: everything").isEqualTo(Long.MAX_VALUE);
            assertThat(limitedIds(store, q, 0)).containsExactly("m1", "m2", "m3", "m4", "m5");

            assertThat(store.commitPoint(q, 3)).isEqualTo(Status.OK);
            Limited r = limited(store, q, 0, 100);
            assertThat(r.ids).containsExactly("m1", "m2", "m3");
            assertThat(r.nextPosition).as("the read stops before m4: read again from there").isEqualTo(4);
            assertThat(limited(store, q, 4, 100).ids).isEmpty();
            assertThat(limitedGet(store, q, "m4")).isEqualTo(Status.NOT_FOUND);
            assertThat(limitedGet(store, q, "m3")).isEqualTo(Status.OK);
            assertThat(all(store, q)).as("the writer's handle: no limit").hasSize(5);

            assertThat(store.commitPoint(q, 2)).isEqualTo(Status.OK);
            assertThat(q.committed()).as("monotonic").isEqualTo(3);
            assertThat(store.commitPoint(q, 99)).isEqualTo(Status.OK);
            assertThat(q.committed()).as("never above the last seq").isEqualTo(5);
            put(store, q, "m6", "body 6");
            assertThat(limitedIds(store, q, 0)).doesNotContain("m6");
            assertThat(store.commitPoint(q, 4)).isEqualTo(Status.OK);
            assertThat(q.committed()).isEqualTo(5);

            // A system record (id starting with a zero byte) above it is shown: readers find the
            // replication's record through it.
            assertThat(store.put(q, new byte[] {0, 'r'}, 0, 0, buf(""), buf("record"), false, 0)).isEqualTo(Status.OK);
            ByteBuf out = Unpooled.buffer();
            assertThat(store.get(q, new byte[] {0, 'r'}, out, QueueStore.visibleLimit(q))).isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.queue("q");
            assertThat(q.committed()).as("after a restart").isEqualTo(5);
            assertThat(limitedIds(store, q, 0)).containsExactly("m1", "m2", "m3", "m4", "m5");
            // Every record of the queue's first file is copied forward or dead: the COMMIT record
            // pins its file and is written again before the file goes.
            assertThat(store.commit()).isEqualTo(Status.OK);
            clock.advanceMillis(2000);
            put(store, q, "m8", "body 8");
            assertThat(store.commit()).isEqualTo(Status.OK);
            clock.advanceMillis(2000);
            store.maintenance();
            assertThat(store.journalFiles()).isEqualTo(1);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            QueueState q = store.queue("q");
            assertThat(q.committed()).as("after compaction deleted the file of the COMMIT record").isEqualTo(5);
            assertThat(limitedIds(store, q, 0)).containsExactly("m1", "m2", "m3", "m4", "m5");
        }
    }

    @Test
    void aRebaseLowersTheCommitPointToTheNewSeq() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            for (int i = 1; i <= 4; i++) {
                put(store, q, "m" + i, "b");
            }
            assertThat(store.commitPoint(q, 4)).isEqualTo(Status.OK);
            assertThat(store.rebase(q, 2, 0)).isEqualTo(Status.OK);
            assertThat(q.committed()).isEqualTo(2);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.queue("q").committed()).as("replayed in order").isEqualTo(2);
        }
    }

    @Test
    void aQueueWhosePositionsRunAheadOfItsSeqsIsReadAsBefore() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            put(store, q, "m1", "b");
            // A position above the seq, as a queue numbered by PUTs before positions were seqs has.
            assertThat(store.put(q, id("m2"), 0, 0, buf(""), buf("b"), false, 50)).isEqualTo(Status.OK);
            assertThat(store.commitPoint(q, 1)).isEqualTo(Status.OK);
            assertThat(QueueStore.visibleLimit(q)).isEqualTo(Long.MAX_VALUE);
            assertThat(limitedIds(store, q, 0)).containsExactly("m1", "m2");
        }
    }

    private record Limited(long nextPosition, List<String> ids) {
    }

    private static List<String> limitedIds(QueueStore store, QueueState q, long from) {
        return limited(store, q, from, 100).ids;
    }

    private static Limited limited(QueueStore store, QueueState q, long from, int maxCount) {
        ByteBuf out = Unpooled.buffer();
        assertThat(store.read(q, from, maxCount, 1 << 20, 0, out, QueueStore.visibleLimit(q))).isEqualTo(Status.OK);
        long next = out.readLong();
        int count = out.readInt();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            StoredMessage m = StoredMessage.readRecord(out);
            if (m.id()[0] != 0) {
                ids.add(str(m.id()));
            }
        }
        return new Limited(next, ids);
    }

    private static Status limitedGet(QueueStore store, QueueState q, String id) {
        return store.get(q, id(id), Unpooled.buffer(), QueueStore.visibleLimit(q));
    }
}
