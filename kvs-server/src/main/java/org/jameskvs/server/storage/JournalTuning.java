package org.jameskvs.server.storage;

import net.openhft.chronicle.core.time.SystemTimeProvider;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;

/**
 * Journal knobs that the server's config file normally leaves alone; tests use them to roll files and
 * compact quickly.
 *
 * <p>Roll cycle: {@link RollCycles#FIVE_MINUTELY}. A journal file can only be deleted once every
 * message in it is dead or copied forward, so files must be short-lived: in a mail spool most
 * messages are delivered within seconds, so a five-minute file is usually entirely dead a few
 * minutes after it closes and goes without copying anything, while a per-minute cycle would create
 * 1,440 files a day for little gain. Its index (2,048 x 2,048 x 256 entries per cycle) is never the
 * limit.
 *
 * @param rollCycle           Chronicle roll cycle (one journal file per cycle)
 * @param timeProvider        clock of Chronicle (decides the cycle) and of the store (fsync interval,
 *                            file ages); a {@code SetTimeProvider} lets tests roll at will
 * @param blockSize           Chronicle block size: files grow in chunks of this size; the largest
 *                            record is a quarter of it (Chronicle's overlap size)
 * @param compactMinAgeMillis the oldest file is copied forward only once it closed this long ago
 * @param compactMaxLiveRatio ... and only while its live bytes are at most this fraction of its bytes
 *                            (1.0 = always; 0.5 bounds space amplification near 2x)
 * @param copyBudgetBytes     bytes copied forward per {@code maintenance()} call, so one call never
 *                            stalls the event loop for long
 * @param warmAheadBytes      how far ahead of the writer {@link JournalPageWarmer} prepares journal
 *                            pages (populated or read into the page cache), off the store thread
 *                            (0 = no warming thread)
 */
public record JournalTuning(RollCycle rollCycle, TimeProvider timeProvider, long blockSize,
                            long compactMinAgeMillis, double compactMaxLiveRatio, long copyBudgetBytes,
                            long warmAheadBytes) {

    public static JournalTuning defaults() {
        return new JournalTuning(RollCycles.FIVE_MINUTELY, SystemTimeProvider.INSTANCE, 128L << 20,
                10 * 60_000L, 0.5, 32L << 20, 32L << 20);
    }

    public JournalTuning withRollCycle(RollCycle cycle, TimeProvider time) {
        return new JournalTuning(cycle, time, blockSize, compactMinAgeMillis, compactMaxLiveRatio, copyBudgetBytes,
                warmAheadBytes);
    }

    public JournalTuning withBlockSize(long bytes) {
        return new JournalTuning(rollCycle, timeProvider, bytes, compactMinAgeMillis, compactMaxLiveRatio,
                copyBudgetBytes, warmAheadBytes);
    }

    public JournalTuning withCompaction(long minAgeMillis, double maxLiveRatio, long budgetBytes) {
        return new JournalTuning(rollCycle, timeProvider, blockSize, minAgeMillis, maxLiveRatio, budgetBytes,
                warmAheadBytes);
    }

    public JournalTuning withWarmAhead(long bytes) {
        return new JournalTuning(rollCycle, timeProvider, blockSize, compactMinAgeMillis, compactMaxLiveRatio,
                copyBudgetBytes, bytes);
    }
}
