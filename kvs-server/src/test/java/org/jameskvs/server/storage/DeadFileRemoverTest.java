package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.server.storage.StoreTestSupport.*;

/** Dead journal files leave the journal at once and are unlinked off the store thread. */
class DeadFileRemoverTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void aRemovedFileLeavesItsNameAtOnceAndIsUnlinkedByTheRemoversThread() throws Exception {
        Path file = Files.write(dir.resolve("20300101-000000.cq4"), new byte[1 << 20]);
        try (DeadFileRemover remover = new DeadFileRemover("test-remover")) {
            remover.remove(file);
            assertThat(file).doesNotExist();
            awaitNoFiles("*" + DeadFileRemover.SUFFIX);
            assertThat(remover.pending()).isZero();
        }
    }

    @Test
    void aMissingFileIsIgnored() throws Exception {
        try (DeadFileRemover remover = new DeadFileRemover("test-remover")) {
            remover.remove(dir.resolve("gone.cq4"));
            assertThat(remover.pending()).isZero();
        }
    }

    @Test
    void leftoversOfAStoppedProcessAreRemovedWhenTheJournalOpensAndJournalFilesAreKept() throws Exception {
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));
        StoreConfig config = secondlyJournal(dir, clock);
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("q", 0, 0);
            put(store, q, "kept", "body");
            assertThat(store.commit()).isEqualTo(Status.OK);
        }
        Path leftover = Files.write(dir.resolve("20291231-235959.cq4" + DeadFileRemover.SUFFIX), new byte[4096]);
        try (QueueStore store = QueueStore.open(config)) {
            assertThat(leftover).doesNotExist();
            assertThat(str(get(store, store.queue("q"), "kept").body())).isEqualTo("body");
        }
    }

    @Test
    void compactionDeletesDeadFilesWithoutLeavingAnythingBehind() throws Exception {
        SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));
        StoreConfig config = StoreConfig.defaults(dir).withMinFreeDiskBytes(0).withTuning(JournalTuning.defaults()
                .withRollCycle(TestRollCycles.TEST_SECONDLY, clock).withBlockSize(1 << 20)
                .withCompaction(0, 1.0, 32L << 20));
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("q", 0, 0);
            for (int f = 0; f < 4; f++) {
                put(store, q, "m" + f, "body".repeat(100));
                assertThat(store.commit()).isEqualTo(Status.OK);
                clock.advanceMillis(1000);
            }
            List<Path> before = files("*.cq4");
            for (int f = 0; f < 4; f++) {
                assertThat(store.delete(q, id("m" + f))).isEqualTo(Status.OK);
            }
            assertThat(store.commit()).isEqualTo(Status.OK);
            store.maintenance();
            assertThat(store.journalFiles()).isEqualTo(1);
            // the deleted files are gone from the journal's directory at once, and unlinked soon after
            assertThat(files("*.cq4")).hasSizeLessThan(before.size());
            awaitNoFiles("*" + DeadFileRemover.SUFFIX);
        }
        try (QueueStore store = QueueStore.open(config)) {
            assertThat(store.queue("q").size()).isZero();
        }
    }

    private List<Path> files(String glob) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            java.nio.file.PathMatcher m = dir.getFileSystem().getPathMatcher("glob:" + glob);
            return s.filter(p -> m.matches(p.getFileName())).toList();
        }
    }

    /** Waits (bounded) until no file matches: the remover's thread works on its own schedule. */
    private void awaitNoFiles(String glob) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!files(glob).isEmpty()) {
            assertThat(System.nanoTime()).as("files %s still there after %s", files(glob), WAIT).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
