package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.RollCycles;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.jameskvs.server.storage.StoreTestSupport.body;
import static org.jameskvs.server.storage.StoreTestSupport.get;
import static org.jameskvs.server.storage.StoreTestSupport.ids;
import static org.jameskvs.server.storage.StoreTestSupport.put;
import static org.jameskvs.server.storage.StoreTestSupport.str;

/**
 * With {@code fsync.policy=batch} the page warmer populates the writer's mapping a limited distance
 * ahead, so the filesystem has the journal's next blocks before the writer fills them (an fsync then
 * writes data, not block allocations and extent metadata), and the journal's content is unchanged.
 * Allocation is read from the file's block count ({@code stat -c %b}, which on ext4 includes blocks
 * reserved for dirty pages); everything allocated beyond the writer's end was allocated ahead of it.
 */
class SyncedJournalAllocationTest {
    private static final int RECORDS = 3000;
    private static final int PER_COMMIT = 10;
    private static final long PAGE = PagePopulator.PAGE;
    /**
     * Whole steps only, so more than three steps of the four of the window are populated ahead once
     * the warmer caught up; asked: half the window, since the block count also misses the holes
     * Chronicle leaves below the writer's end (24 KiB here), which this measure counts against it.
     * Without populating, none is allocated ahead (this measure gave -24,576 bytes).
     */
    private static final long EXPECTED_AHEAD = JournalPageWarmer.SYNCED_POPULATE_AHEAD / 2;

    @TempDir
    Path dir;

    @AfterEach
    void uninstall() {
        FsyncObserver.install(null);
    }

    @Test
    void theBlocksAheadOfTheWriterAreAllocatedAndTheRecordsReadBackUnchanged() throws Exception {
        assumeThat(PagePopulator.create().works()).as("madvise(MADV_POPULATE_WRITE) available").isTrue();
        AtomicReference<Map<Path, Long>> lastSynced = new AtomicReference<>();
        FsyncObserver.install((d, ends) -> lastSynced.set(Map.copyOf(ends)));
        // a clock that stands still: one journal file, however long the test takes
        SetTimeProvider clock = new SetTimeProvider(System.currentTimeMillis() * 1_000_000L);
        StoreConfig config = StoreConfig.defaults(dir).withMinFreeDiskBytes(0).withFsync(FsyncPolicy.BATCH)
                .withTuning(JournalTuning.defaults().withRollCycle(RollCycles.FIVE_MINUTELY, clock));
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.create("q", 0, 0);
            for (int i = 0; i < RECORDS; i++) {
                put(store, q, "m" + i, body(i));
                if (i % PER_COMMIT == PER_COMMIT - 1) {
                    assertThat(store.commit()).isEqualTo(Status.OK);
                }
            }
            assertThat(lastSynced.get()).as("journal files synced").hasSize(1);
            Map.Entry<Path, Long> writer = lastSynced.get().entrySet().iterator().next();
            Path file = writer.getKey();
            long end = writer.getValue();
            assertThat(end).as("the writer went past several populate steps").isGreaterThan(4 * JournalPageWarmer.POPULATE_STEP);

            // the warmer works on its own thread: wait for it, bounded
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long ahead = allocatedBeyond(file, end);
            while (ahead < EXPECTED_AHEAD && System.nanoTime() < deadline) {
                Thread.sleep(20);
                ahead = allocatedBeyond(file, end);
            }
            assertThat(ahead).as("bytes allocated beyond the writer's end %,d of %s", end, file)
                    .isGreaterThanOrEqualTo(EXPECTED_AHEAD)
                    // limited: not the warmer's whole aheadBytes (32 MB)
                    .isLessThan(JournalPageWarmer.SYNCED_POPULATE_AHEAD + 2 * JournalPageWarmer.POPULATE_STEP);
            assertThat(zerosFrom(file, end, JournalPageWarmer.SYNCED_POPULATE_AHEAD))
                    .as("populating wrote nothing ahead of the writer").isTrue();
        }
        try (QueueStore store = QueueStore.open(config)) {
            QueueState q = store.queue("q");
            assertThat(StoreTestSupport.all(store, q)).isEqualTo(ids(0, RECORDS));
            for (int i = 0; i < RECORDS; i++) {
                StoredMessage m = get(store, q, "m" + i);
                assertThat(m).as("m%d after restart", i).isNotNull();
                assertThat(str(m.body())).as("body of m%d", i).isEqualTo(body(i));
                assertThat(str(m.state())).as("state of m%d", i).isEqualTo("s-m" + i);
                assertThat(m.priority()).isEqualTo(1);
            }
        }
    }

    /**
     * Bytes of disk the file holds beyond {@code end} (page-rounded), at least: all its blocks less
     * the part below {@code end}, counted as if it had no holes.
     */
    private static long allocatedBeyond(Path file, long end) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("stat", "-c", "%b", file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("stat finished").isTrue();
        assertThat(p.exitValue()).as("stat -c %%b: %s", out).isZero();
        return Long.parseLong(out) * 512 - ((end + PAGE - 1) & -PAGE);
    }

    private static boolean zerosFrom(Path file, long from, long length) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate((int) length);
            while (b.hasRemaining() && ch.read(b, from + b.position()) > 0) {
                // read on
            }
            b.flip();
            while (b.hasRemaining()) {
                if (b.get() != 0) {
                    return false;
                }
            }
            return true;
        }
    }
}
