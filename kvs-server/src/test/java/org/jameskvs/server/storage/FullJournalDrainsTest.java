package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SetTimeProvider;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/**
 * A journal at {@code journal.maxBytes} refuses PUTs only: DELETEs, REPLACEs and the compactor's
 * copies go on into the reserve past the limit ({@code Journal.checkSpace}), so a full node keeps
 * draining (delivered mail deleted, deferred mail rescheduled) and takes PUTs again once the dead
 * files are gone, without a restart on more space. The replication's own record (a system id) goes
 * on too. Before, the first DELETE that did not fit was refused too: a full node could only be
 * emptied by restarting it with a higher limit.
 */
class FullJournalDrainsTest {
    /** Each file of the test's per-second journal starts with about 512 KiB of Chronicle's header and index. */
    private static final long LIMIT = 2L << 20;
    /** The replicating writer's record's id (a leading zero byte: not a mail). */
    private static final byte[] SYSTEM_RECORD = {0, 'r', 'e', 'p', 'l'};
    /** At most the journal bytes of a REPLACE with a 5-byte state (the record, its framing, alignment). */
    private static final long FIRST_RECORD_BYTES = 256;

    @TempDir
    Path dir;

    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));

    @Test
    void aFullJournalTakesDeletesAndReplacesAndTakesPutsAgainOnceItsDeadFileIsGone() {
        StoreConfig config = limitedJournal();
        List<String> stored = new ArrayList<>();
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("q", 0, 0);
            // About half the journal in one file, the rest in the next (only a file that is not the newest can go).
            fill(store, q, stored, 10_000, 50);
            assertThat(store.commit()).isEqualTo(Status.OK);
            clock.advanceMillis(1000);
            assertThat(fill(store, q, stored, 10_000, Integer.MAX_VALUE)).isEqualTo(Status.DISK_FULL);
            // Crumbs: what is left is then smaller than a PUT of one byte, so without the reserve the
            // deletes below would soon be refused as well.
            assertThat(fill(store, q, stored, 1, Integer.MAX_VALUE)).isEqualTo(Status.DISK_FULL);
            assertThat(store.commit()).isEqualTo(Status.OK);

            // The replication's own record (a system id: ReservedIds) is written whole by an OPEN, a
            // rebuild or a catch-up (a replacing PUT): it goes into the reserve, or a full node's copy
            // could not be reopened, caught up or rebuilt for its record alone. A mail's is refused.
            assertThat(store.put(q, SYSTEM_RECORD, 0, 0, buf("lease 1"), buf(""), true))
                    .as("a system record's PUT at the limit").isEqualTo(Status.OK);
            assertThat(store.put(q, SYSTEM_RECORD, 0, 0, buf("lease 2"), buf(""), true))
                    .as("its rewrite at the limit").isEqualTo(Status.OK);
            assertThat(store.put(q, id(stored.get(0)), 0, 0, buf(""), buf("x"), true))
                    .as("a mail's replacing PUT at the limit").isEqualTo(Status.DISK_FULL);
            assertThat(store.delete(q, SYSTEM_RECORD)).isEqualTo(Status.OK);

            // Deferred mail rescheduled, then every mail delivered: all taken while the journal is full.
            assertThat(store.replace(q, id(stored.get(stored.size() - 1)), 0, 42, buf("retry 1"))).isEqualTo(Status.OK);
            for (String id : stored) {
                assertThat(store.delete(q, id(id))).as("DELETE %s at the limit", id).isEqualTo(Status.OK);
            }
            assertThat(store.commit()).isEqualTo(Status.OK);
            System.out.println("FullJournalDrainsTest: " + stored.size() + " PUTs before the limit; a REPLACE and "
                    + stored.size() + " DELETEs taken at it");
            assertThat(store.put(q, id("while-full"), 0, 0, buf(""), buf("x")))
                    .as("a PUT before any file died").isEqualTo(Status.DISK_FULL);

            store.maintenance(); // the older file holds nothing live any more: it goes
            assertThat(store.journalFiles()).isEqualTo(1);
            assertThat(store.put(q, id("after"), 0, 0, buf(""), buf("x"))).as("a PUT once the dead file is gone")
                    .isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        try (QueueStore store = QueueStore.open(config)) {
            assertThat(all(store, store.queue("q"))).as("after a restart").containsExactly("after");
        }
    }

    /**
     * The reserve's size ({@code Journal.checkSpace}): past {@code journal.maxBytes}, records other than
     * a mail's PUT go on up to an eighth of it plus the newest journal file's header (a file that begins
     * at the limit must not eat the reserve), and no further: the first record that does not fit is
     * refused with DISK_FULL naming that end.
     */
    @Test
    void theReserveIsAnEighthOfTheLimitPlusTheNewestFilesHeaderAndNoMore() {
        StoreConfig config = limitedJournal();
        List<String> stored = new ArrayList<>();
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("q", 0, 0);
            assertThat(fill(store, q, stored, 10_000, Integer.MAX_VALUE)).isEqualTo(Status.DISK_FULL);
            assertThat(store.commit()).isEqualTo(Status.OK);
            byte[] mail = id(stored.get(0));

            // A new file begins with a REPLACE at the limit: its header is what that first record added,
            // less the record itself (FIRST_RECORD_BYTES at most).
            clock.advanceMillis(1000);
            long before = store.journalUsedBytes();
            assertThat(store.replace(q, mail, 0, 1, buf("first"))).isEqualTo(Status.OK);
            long headerAndFirst = store.journalUsedBytes() - before;
            assertThat(store.journalFiles()).as("the REPLACE began a new file").isEqualTo(2);

            byte[] state = new byte[4096];
            Status last = Status.OK;
            int taken = 0;
            while (last == Status.OK && taken < 10_000) {
                last = store.replace(q, mail, 0, 2 + taken, buf(state));
                taken += last == Status.OK ? 1 : 0;
            }
            long used = store.journalUsedBytes();
            String refusal = store.lastError();
            System.out.printf("FullJournalDrainsTest: limit %d, the newest file's header and first record %d, %d REPLACEs of"
                    + " %d bytes into the reserve, used %d: %s%n", LIMIT, headerAndFirst, taken, state.length, used, refusal);
            assertThat(last).as("a REPLACE past the reserve").isEqualTo(Status.DISK_FULL);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("limit (\\d+) \\(journal.maxBytes and its reserve\\)")
                    .matcher(refusal);
            assertThat(m.find()).as("the refusal names the reserve's end: %s", refusal).isTrue();
            long reserveEnd = Long.parseLong(m.group(1));
            assertThat(reserveEnd).as("journal.maxBytes + an eighth of it + the newest file's header")
                    .isBetween(LIMIT + LIMIT / 8 + headerAndFirst - FIRST_RECORD_BYTES, LIMIT + LIMIT / 8 + headerAndFirst);
            assertThat(used).as("the journal never goes past the reserve").isLessThanOrEqualTo(reserveEnd);
            assertThat(reserveEnd - used).as("refused only once the next record no longer fits")
                    .isLessThan(state.length + 512L);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
    }

    /**
     * The same rule for the file system's free space: with {@code disk.minFreeBytes} at 1.5 x what is
     * free, a PUT is below the minimum, a DELETE and a REPLACE are above half of it (the reserve).
     */
    @Test
    void belowMinFreeDiskAPutIsRefusedAndADeleteAndAReplaceAreTaken() throws Exception {
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir).withMinFreeDiskBytes(0))) {
            QueueState q = store.create("q", 0, 0);
            put(store, q, "kept", "body");
            put(store, q, "delivered", "body");
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        long free = java.nio.file.Files.getFileStore(dir).getUsableSpace();
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir).withMinFreeDiskBytes(free + free / 2))) {
            QueueState q = store.queue("q");
            assertThat(store.put(q, id("new"), 0, 0, buf(""), buf("x"))).as("a PUT below disk.minFreeBytes")
                    .isEqualTo(Status.DISK_FULL);
            assertThat(store.delete(q, id("delivered"))).as("a DELETE in the reserve").isEqualTo(Status.OK);
            assertThat(store.replace(q, id("kept"), 0, 42, buf("retry 1"))).as("a REPLACE in the reserve").isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        try (QueueStore store = QueueStore.open(StoreConfig.defaults(dir).withMinFreeDiskBytes(0))) {
            assertThat(all(store, store.queue("q"))).as("after a restart").containsExactly("kept");
        }
    }

    /**
     * One journal file per second of the test's clock, {@code journal.maxBytes} at {@link #LIMIT}, an
     * older file compacted at once (age 0, any live ratio).
     */
    private StoreConfig limitedJournal() {
        StoreConfig base = secondlyJournal(dir, clock);
        return base.withMaxJournalBytes(LIMIT).withTuning(base.tuning().withCompaction(0, 1.0, 32L << 20));
    }

    /** At most {@code count} PUTs of {@code size}-byte bodies, until one is refused: the last status. */
    private static Status fill(QueueStore store, QueueState q, List<String> stored, int size, int count) {
        for (int i = 0; i < count; i++) {
            String id = "m" + stored.size();
            Status s = store.put(q, id(id), 0, 0, buf(""), buf(new byte[size]));
            if (s != Status.OK) {
                return s;
            }
            stored.add(id);
            assertThat(stored).as("puts before the limit").hasSizeLessThan(100_000);
        }
        return Status.OK;
    }
}
