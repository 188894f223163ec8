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
    void bitFlipInLastFileStopsReplayAtTheBadRecord() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            write(store, store.create("q", 0, 0), 0, 20);
        }
        Path last = journalFiles(dir).get(journalFiles(dir).size() - 1);
        flip(last, find(last, "<BODY-10>") + 300);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).anySatisfy(p -> assertThat(p).contains("CRC32C"));
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 10));
            assertThat(get(store, q, "m10")).isNull();
            assertThat(q.bytes()).isEqualTo(10L * body(0).length());
            put(store, q, "after", "x");
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            assertThat(all(store, store.queue("q"))).hasSize(11).endsWith("after");
        }
    }

    @Test
    void bitFlipInOlderFileSkipsOnlyThatRecord() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            write(store, q, 0, 10);
            clock.advanceMillis(2000);
            write(store, q, 10, 20);
        }
        List<Path> files = journalFiles(dir);
        assertThat(files).hasSize(2);
        flip(files.get(0), find(files.get(0), "<BODY-5>") + 200);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).hasSize(1)
                    .first().asString().contains("skipped", "CRC32C");
            QueueState q = store.queue("q");
            List<String> expected = new java.util.ArrayList<>(ids(0, 20));
            expected.remove("m5");
            assertThat(all(store, q)).containsExactlyElementsOf(expected);
            assertThat(q.txn()).isEqualTo(20);
            assertThat(store.put(q, id("m19"), 0, 0, buf(""), buf(""))).isEqualTo(Status.DUPLICATE_ID);
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
