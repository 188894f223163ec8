package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SetTimeProvider;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.JournalDamage.*;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/**
 * The queue's last seq and rolling digest ({@link QueueDigest}) as the crash contract states them:
 * recovery restores both exactly, and a copy whose journal lost one record in an older file (its
 * other records intact, its transaction count unchanged) ends with another digest than an intact
 * copy with the same history, so comparing (seq, digest) tells the two apart.
 */
class QueueDigestRecoveryTest {
    @TempDir
    Path dir;

    /** The same history written into two journals, each rolled to a second file halfway. */
    private long[] writeHistory(Path into) {
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));
        try (QueueStore store = QueueStore.open(secondlyJournal(into, clock))) {
            QueueState q = store.create("q", 0, 0);
            for (int i = 0; i < 10; i++) {
                put(store, q, "m" + i, body(i));
                assertThat(store.commit()).isEqualTo(Status.OK);
            }
            assertThat(store.delete(q, id("m3"))).isEqualTo(Status.OK);
            assertThat(store.replace(q, id("m4"), 1, 0, buf("state-4"))).isEqualTo(Status.OK);
            assertThat(store.setOwner(q, 7, "owner")).isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
            clock.advanceMillis(2000);
            for (int i = 10; i < 20; i++) {
                put(store, q, "m" + i, body(i));
                assertThat(store.commit()).isEqualTo(Status.OK);
            }
            assertThat(q.lastSeq()).as("20 puts, a delete, a replace; the owner change is no data mutation").isEqualTo(22);
            return new long[] {q.lastSeq(), q.digest(), q.txn()};
        }
    }

    private static long[] reopen(Path from) {
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:10Z"));
        try (QueueStore store = QueueStore.open(secondlyJournal(from, clock))) {
            QueueState q = store.queue("q");
            return new long[] {q.lastSeq(), q.digest(), q.txn()};
        }
    }

    @Test
    void recoveryRestoresSeqAndDigestExactly() {
        long[] live = writeHistory(dir.resolve("a"));
        long[] other = writeHistory(dir.resolve("b"));
        assertThat(other).as("same history, same (seq, digest, txn)").containsExactly(live);
        assertThat(reopen(dir.resolve("a"))).containsExactly(live);
    }

    @Test
    void aPutLostFromAnOlderFileChangesTheDigest() throws IOException {
        long[] intact = writeHistory(dir.resolve("intact"));
        Path damaged = dir.resolve("damaged");
        assertThat(writeHistory(damaged)).containsExactly(intact);
        List<Path> files = journalFiles(damaged);
        assertThat(files).hasSize(2);
        flip(files.get(0), find(files.get(0), "<BODY-5>") + 200);

        long[] after = reopen(damaged);
        assertThat(after[2]).as("the transaction count cannot tell").isEqualTo(intact[2]);
        assertThat(after[1]).as("digest of the copy that lost m5's PUT").isNotEqualTo(intact[1]);
        assertThat(reopen(damaged)).as("stable across restarts").containsExactly(after);
        assertThat(reopen(dir.resolve("intact"))).containsExactly(intact);
    }

    @Test
    void aDeleteLostFromAnOlderFileChangesTheDigest() throws IOException {
        long[] intact = writeHistory(dir.resolve("intact"));
        Path damaged = dir.resolve("damaged");
        writeHistory(damaged);
        Path older = journalFiles(damaged).get(0);
        flip(older, findLast(older, "m3")); // the DELETE is the last record naming m3 in that file

        long[] after = reopen(damaged);
        assertThat(after[2]).isEqualTo(intact[2]);
        assertThat(after[1]).as("digest of the copy that lost the DELETE of m3").isNotEqualTo(intact[1]);
    }

    @Test
    void rebaseIsJournaled() {
        Path d = dir.resolve("r");
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));
        try (QueueStore store = QueueStore.open(secondlyJournal(d, clock))) {
            QueueState q = store.create("q", 0, 0);
            put(store, q, "a", "body");
            long txn = q.txn();
            assertThat(store.rebase(q, 41, 0x1234_5678_9ABCL)).isEqualTo(Status.OK);
            assertThat(q.txn()).as("REBASE is no mutation").isEqualTo(txn);
            put(store, q, "b", "body");
            assertThat(q.lastSeq()).isEqualTo(42);
            assertThat(store.commit()).isEqualTo(Status.OK);
            long[] live = {q.lastSeq(), q.digest(), q.txn()};
            store.close();
            assertThat(reopen(d)).containsExactly(live);
        }
    }
}
