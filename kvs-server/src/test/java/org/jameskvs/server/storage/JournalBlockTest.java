package org.jameskvs.server.storage;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import net.openhft.chronicle.wire.DocumentContext;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.JournalDamage.*;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/**
 * Journal format 2: many records per Chronicle document (one block per group commit). Recovery reads
 * every record of a block; a damaged block in the last file is dropped whole, never in part, with
 * the rest of that file (damage to the queues when complete blocks followed it); one in an older
 * file loses only its bad record and marks the queue damaged; a version-1 journal (one record per
 * document) still opens.
 */
class JournalBlockTest {
    @TempDir
    Path dir;

    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));

    private StoreConfig config() {
        return secondlyJournal(dir, clock);
    }

    /** Puts m[from, to) and commits once: one block. */
    private static void block(QueueStore store, QueueState q, int from, int to) {
        for (int i = from; i < to; i++) {
            put(store, q, "m" + i, body(i));
        }
        assertThat(store.commit()).isEqualTo(Status.OK);
    }

    /** A new store whose queue "q" holds m[0, last end): m[0, ends[0]) in one block, m[ends[0], ends[1]) in the next, ... */
    private void writeBlocks(int... ends) {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            int from = 0;
            for (int to : ends) {
                block(store, q, from, to);
                from = to;
            }
        }
    }

    /** Reopened again: a clean recovery, queue "q" holding exactly {@code expected}. */
    private void assertReopensCleanWith(List<String> expected) {
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            assertThat(all(store, store.queue("q"))).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void everyRecordOfEveryBlockIsReplayed() {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            for (int b = 0; b < 10; b++) {
                for (int i = 0; i < 10; i++) {
                    int n = b * 10 + i;
                    put(store, q, "m" + n, body(n));
                    if (n % 3 == 0) {
                        // store and delete in the same block, as the benchmark's pipelined client does
                        assertThat(store.delete(q, id("m" + n))).isEqualTo(Status.OK);
                    }
                }
                int live = b * 10 % 3 == 0 ? b * 10 + 1 : b * 10;
                assertThat(store.replace(q, id("m" + live), 3, 0, buf("retried"))).isEqualTo(Status.OK);
                assertThat(store.commit()).isEqualTo(Status.OK);
            }
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            QueueState q = store.queue("q");
            List<String> expected = IntStream.range(0, 100).filter(n -> n % 3 != 0).mapToObj(n -> "m" + n).toList();
            assertThat(all(store, q)).containsExactlyElementsOf(expected);
            // 1 CREATE + 100 PUT + 34 DELETE + 10 REPLACE
            assertThat(store.recoveredRecords()).isEqualTo(145);
            assertThat(q.txn()).isEqualTo(144);
            assertThat(str(get(store, q, "m91").state())).isEqualTo("retried");
            assertThat(str(get(store, q, "m92").body())).isEqualTo(body(92));
        }
    }

    @Test
    void recordsThatDoNotFitOneDocumentSpillIntoTheNextBlock() {
        // blockSize 1 MiB: a document (block) holds at most a quarter of it
        String big = "x".repeat(100_000);
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            for (int i = 0; i < 8; i++) {
                put(store, q, "big" + i, big + i);
            }
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isEmpty();
            QueueState q = store.queue("q");
            assertThat(q.size()).isEqualTo(8);
            assertThat(str(get(store, q, "big7").body())).isEqualTo(big + 7);
        }
    }

    @Test
    void aBadRecordInTheLastBlockOfTheLastFileDropsItsWholeBlock() throws IOException {
        // a torn tail: nothing complete after the bad block
        writeBlocks(10, 20);
        Path file = single(journalFiles(dir));
        // m10..m14 are intact, but they were committed together with the damaged m15: a torn tail
        flip(file, find(file, "<BODY-15>") + 100);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).anySatisfy(p -> assertThat(p).contains("CRC32C", "whole block"))
                    .anySatisfy(p -> assertThat(p).contains("torn tail"));
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 10));
            assertThat(q.txn()).isEqualTo(10);
            assertThat(q.nextPosition()).isEqualTo(11);
            assertThat(q.damaged()).as("a torn tail is not damage").isFalse();
            block(store, q, 10, 12);
        }
        assertReopensCleanWith(ids(0, 12));
        assertThat(dir.resolve("quarantine")).isDirectory();
    }

    /**
     * A bad block with complete blocks after it was complete itself (they were committed after it):
     * not a torn write. Replay still stops there and drops the rest of the file (a second copy then
     * sees this copy's transaction number fall behind), but the queue is marked damaged with the
     * transactions lost: some of them were acknowledged.
     */
    @Test
    void aBadBlockInsideTheLastFileDropsTheRestAndMarksTheQueueDamaged() throws IOException {
        writeBlocks(10, 20, 30);
        Path file = single(journalFiles(dir));
        flip(file, find(file, "<BODY-15>") + 100);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).anySatisfy(p -> assertThat(p).contains("CRC32C", "whole block"))
                    .anySatisfy(p -> assertThat(p).contains("not a torn tail"))
                    .anySatisfy(p -> assertThat(p).contains("queue 'q' lost transactions 11..30"));
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 10));
            assertThat(q.txn()).isEqualTo(10);
            assertThat(q.damage()).isEqualTo(new QueueDamage(11, 30));
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.queue("q").damage()).as("after the repair, still damaged").isEqualTo(new QueueDamage(11, 30));
        }
        assertThat(dir.resolve("quarantine")).isDirectory();
    }

    @Test
    void aBlockTruncatedInTheMiddleIsDroppedWhole() throws IOException {
        writeBlocks(10, 20);
        Path file = single(journalFiles(dir));
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(find(file, "<BODY-17>"));
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).isNotEmpty();
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(ids(0, 10));
            assertThat(get(store, q, "m12")).isNull();
            block(store, q, 10, 11);
        }
        assertReopensCleanWith(ids(0, 11));
    }

    @Test
    void aBadRecordInAnOlderFileLosesOnlyThatRecordAndMarksItsQueue() throws IOException {
        try (QueueStore store = QueueStore.open(config())) {
            QueueState q = store.create("q", 0, 0);
            block(store, q, 0, 10);
            block(store, q, 10, 20);
            clock.advanceMillis(2000);
            block(store, q, 20, 30);
        }
        List<Path> files = journalFiles(dir);
        assertThat(files).hasSize(2);
        flip(files.get(0), find(files.get(0), "<BODY-15>") + 100);
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).hasSize(2)
                    .anySatisfy(p -> assertThat(p).contains("skipped", "CRC32C", "record 6 of its block", "5 before the bad one"))
                    .anySatisfy(p -> assertThat(p).contains("queue 'q' lost transactions 16..16", "PUT"));
            QueueState q = store.queue("q");
            List<String> expected = new ArrayList<>(ids(0, 30));
            expected.remove("m15");
            assertThat(all(store, q)).containsExactlyElementsOf(expected);
            assertThat(q.txn()).isEqualTo(30);
            assertThat(q.damage()).isEqualTo(new QueueDamage(16, 16));
        }
    }

    @Test
    void aBlockOfAnUnknownFormatVersionIsABadBlock() throws IOException {
        writeBlocks(5, 10);
        Path file = single(journalFiles(dir));
        // the version field of the block holding m5..m9: its header, then m5's PUT record (state "s-m5" at 42 + id length)
        long record = find(file, "s-m5") - (42 + 2);
        long version = record - JournalBlockDescriptor.HEADER_SIZE + JournalBlockDescriptor.VERSION + 3;
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(version);
            assertThat(raf.read()).isEqualTo(JournalBlockDescriptor.FORMAT_VERSION);
            raf.seek(version);
            raf.write(3);
        }
        try (QueueStore store = QueueStore.open(config())) {
            assertThat(store.recoveryProblems()).anySatisfy(p -> assertThat(p).contains("unknown journal block format version 3"));
            assertThat(all(store, store.queue("q"))).containsExactlyElementsOf(ids(0, 5));
        }
    }

    @Test
    void aVersionOneJournalOpensAndGrowsInVersionTwo() throws IOException {
        Path v2 = dir.resolve("v2");
        StoreConfig v2Config = StoreConfig.defaults(v2).withMinFreeDiskBytes(0).withTuning(config().tuning());
        try (QueueStore store = QueueStore.open(v2Config)) {
            QueueState q = store.create("q", 0, 0);
            assertThat(store.commit()).isEqualTo(Status.OK);
            for (int i = 0; i < 10; i++) {
                block(store, q, i, i + 1);
            }
            assertThat(store.delete(q, id("m3"))).isEqualTo(Status.OK);
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        Path v1 = dir.resolve("v1");
        int documents = rewriteAsVersionOne(v2, v1);
        assertThat(documents).isEqualTo(12);
        StoreConfig v1Config = StoreConfig.defaults(v1).withMinFreeDiskBytes(0).withTuning(config().tuning());
        List<String> expected = new ArrayList<>(ids(0, 10));
        expected.remove("m3");
        try (QueueStore store = QueueStore.open(v1Config)) {
            assertThat(store.recoveryProblems()).isEmpty();
            assertThat(store.recoveredRecords()).isEqualTo(12);
            QueueState q = store.queue("q");
            assertThat(all(store, q)).containsExactlyElementsOf(expected);
            assertThat(str(get(store, q, "m9").body())).isEqualTo(body(9));
            block(store, q, 10, 13);
        }
        expected.addAll(ids(10, 13));
        try (QueueStore store = QueueStore.open(v1Config)) {
            assertThat(store.recoveryProblems()).isEmpty();
            assertThat(all(store, store.queue("q"))).containsExactlyElementsOf(expected);
        }
    }

    /** Copies a journal whose blocks hold one record each into the version-1 layout: one bare record per document. */
    private int rewriteAsVersionOne(Path from, Path to) {
        int n = 0;
        try (SingleChronicleQueue in = SingleChronicleQueueBuilder.binary(from).rollCycle(TestRollCycles.TEST_SECONDLY)
                .timeProvider(clock).blockSize(1 << 20).build();
             SingleChronicleQueue out = SingleChronicleQueueBuilder.binary(to).rollCycle(TestRollCycles.TEST_SECONDLY)
                     .timeProvider(clock).blockSize(1 << 20).build();
             ExcerptTailer tailer = in.createTailer();
             ExcerptAppender appender = out.createAppender()) {
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return n;
                    }
                    Bytes<?> bytes = dc.wire().bytes();
                    byte[] doc = new byte[(int) bytes.readRemaining()];
                    bytes.read(doc);
                    try (DocumentContext w = appender.writingDocument()) {
                        w.wire().bytes().write(doc, JournalBlockDescriptor.HEADER_SIZE,
                                doc.length - JournalBlockDescriptor.HEADER_SIZE);
                    }
                    n++;
                }
            }
        }
    }

    private static Path single(List<Path> files) {
        assertThat(files).hasSize(1);
        return files.get(0);
    }

}
