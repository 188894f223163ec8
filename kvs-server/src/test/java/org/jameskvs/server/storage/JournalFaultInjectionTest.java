package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SetTimeProvider;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.JournalDamage.*;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/**
 * Damages journal files the way crashes and disks do (Square Tape style: truncate in the middle of
 * a record, flip a byte inside one), then reopens: the store must open, keep every intact record,
 * report the bad one, and never apply half of it.
 */
class JournalFaultInjectionTest {
    @TempDir
    Path dir;

    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));

    private StoreConfig config() {
        return secondlyJournal(dir, clock);
    }

    /** One put per group commit, i.e. one record per journal block, as a client waiting for each answer gets. */
    private void write(QueueStore store, QueueState q, int from, int to) {
        for (int i = from; i < to; i++) {
            put(store, q, "m" + i, body(i));
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
    }

    /**
     * Two journal files: queue "q" gets m0..m9 and queue "other" o1, then {@code alsoInTheFirst}
     * writes to q, all committed together; the journal rolls; q gets m10..m19.
     */
    private void writeTwoFiles(BiConsumer<QueueStore, QueueState> alsoInTheFirst) {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            QueueState other = store.create("other", 0, 0);
            write(store, q, 0, 10);
            put(store, other, "o1", "other's");
            alsoInTheFirst.accept(store, q);
            assertThat(store.commit()).isEqualTo(Status.OK);
            clock.advanceMillis(2000);
            write(store, q, 10, 20);
        }
    }

    @Test
    void truncatedLastFileKeepsTheIntactPrefix() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            write(store, store.create("q", 0, 0), 0, 20);
        }
        Path last = journalFiles(dir).get(journalFiles(dir).size() - 1);
        long cut = find(last, "<BODY-15>") + 100;
        try (RandomAccessFile raf = new RandomAccessFile(last.toFile(), "rw")) {
            raf.setLength(cut);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isNotEmpty();
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 15));
            assertThat(q.txn()).isEqualTo(15);
            assertThat(q.nextPosition()).isEqualTo(16);
            assertThat(get(store, q, "m15")).isNull();
            put(store, q, "m15", "rewritten after the crash");
            put(store, q, "m16", "more");
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 17));
            assertThat(str(get(store, q, "m15").body())).isEqualTo("rewritten after the crash");
            assertThat(q.txn()).isEqualTo(17);
        }
        assertThat(dir.resolve("quarantine")).isDirectory();
    }

    @Test
    void bitFlipInTheLastBlockOfTheLastFileIsATornTail() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            write(store, store.create("q", 0, 0), 0, 20);
        }
        Path last = journalFiles(dir).get(journalFiles(dir).size() - 1);
        flip(last, find(last, "<BODY-19>") + 300);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).anySatisfy(p -> assertThat(p).contains("CRC32C"))
                    .anySatisfy(p -> assertThat(p).contains("torn tail"));
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 19));
            assertThat(get(store, q, "m19")).isNull();
            assertThat(q.bytes()).isEqualTo(IntStream.range(0, 19).mapToLong(i -> body(i).length()).sum());
            assertThat(q.damaged()).isFalse();
            put(store, q, "after", "x");
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            assertThat(all(store, store.queue("q"))).hasSize(20).endsWith("after");
        }
    }

    /**
     * A PUT in an older file is damaged: the message is lost, and the queue must say so. Its
     * transaction count stays 20 (the lost record's number is counted by the records after it), so
     * only the damage mark tells this copy from an intact one. Another queue is untouched. The mark
     * survives restarts (it is journaled) until the queue is cleared.
     */
    @Test
    void bitFlipInAnOlderFileLosingAPutMarksThatQueueDamaged() throws IOException {
        writeTwoFiles((store, q) -> {
        });
        List<Path> files = journalFiles(dir);
        assertThat(files).hasSize(2);
        flip(files.get(0), find(files.get(0), "<BODY-5>") + 200);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems())
                    .anySatisfy(p -> assertThat(p).contains("skipped", "CRC32C"))
                    .anySatisfy(p -> assertThat(p).contains("queue 'q' lost transactions 6..6", "PUT"));
            QueueState q = store.queue("q");
            List<String> expected = new java.util.ArrayList<>(ids(0, 20));
            expected.remove("m5");
            assertThat(all(store, q)).containsExactlyElementsOf(expected);
            assertThat(q.txn()).isEqualTo(20);
            assertThat(q.damaged()).isTrue();
            assertThat(q.damage()).isEqualTo(new QueueDamage(6, 6));
            assertThat(store.queue("other").damaged()).isFalse();
            assertThat(all(store, store.queue("other"))).containsExactly("o1");
            assertThat(store.put(q, id("m19"), 0, 0, buf(""), buf(""))).isEqualTo(Status.DUPLICATE_ID);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.queue("q").damage()).as("still damaged after a restart").isEqualTo(new QueueDamage(6, 6));
            assertThat(store.queue("other").damaged()).isFalse();
            assertThat(store.clear(store.queue("q"))).isEqualTo(Status.OK);
            assertThat(store.queue("q").damaged()).as("a cleared queue holds nothing that depends on lost records").isFalse();
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.queue("q").damaged()).isFalse();
        }
    }

    /** A DELETE in an older file is damaged: the deleted message comes back, and the queue says it is damaged. */
    @Test
    void bitFlipInAnOlderFileLosingADeleteMarksThatQueueDamaged() throws IOException {
        writeTwoFiles((store, q) -> assertThat(store.delete(q, id("m3"))).isEqualTo(Status.OK)); // transaction 11
        List<Path> files = journalFiles(dir);
        Path older = files.get(0);
        // the DELETE record is the last one naming m3 in that file (after m3's PUT): flip a bit of its id
        flip(older, findLast(older, "m3"));
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems())
                    .anySatisfy(p -> assertThat(p).contains("queue 'q' lost transactions 11..11", "DELETE"));
            QueueState q = store.queue("q");
            assertThat(all(store, q)).as("the deleted message is back").contains("m3").hasSize(20);
            assertThat(q.txn()).isEqualTo(21);
            assertThat(q.damage()).isEqualTo(new QueueDamage(11, 11));
            assertThat(store.queue("other").damaged()).isFalse();
        }
    }

    /**
     * A record whose length field is damaged: its end cannot be found, so no record can be tied to
     * the loss, and every queue that existed there is marked damaged from its next transaction on.
     */
    @Test
    void damageThatCannotBeTiedToAQueueMarksEveryQueue() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            QueueState other = store.create("other", 0, 0);
            put(store, other, "o1", "other's");
            assertThat(store.commit()).isEqualTo(Status.OK);
            write(store, q, 0, 10);
            clock.advanceMillis(2000);
            write(store, q, 10, 20);
        }
        Path older = journalFiles(dir).get(0);
        // m5's PUT record: 20-byte header, i64 position, u8 id length, id "m5"; its length field is at 4
        long record = find(older, "s-m5") - (42 + 2);
        flip(older, record + JournalRecordDescriptor.LENGTH + 2);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).anySatisfy(p -> assertThat(p).contains("no record can be tied to"));
            assertThat(store.queue("q").damage()).isEqualTo(new QueueDamage(6, QueueDamage.UNKNOWN_END));
            assertThat(store.queue("other").damage()).isEqualTo(new QueueDamage(2, QueueDamage.UNKNOWN_END));
        }
    }

    @Test
    void corruptFirstRecordOfOnlyFileStillOpens() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            store.create("q", 0, 0);
        }
        Path last = journalFiles(dir).get(0);
        flip(last, find(last, "q"));
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isNotEmpty();
            assertThat(store.queue("q")).isNull();
            QueueState q = store.create("q", 0, 0);
            put(store, q, "a", "b");
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(all(store, store.queue("q"))).containsExactly("a");
        }
    }

}
