package org.jameskvs.server.storage;

import java.nio.file.Path;

/**
 * Storage settings (the server's config file maps onto these; defaults documented there too).
 *
 * @param directory            where the journal lives
 * @param fsyncPolicy          see {@link FsyncPolicy}; default NONE
 * @param fsyncIntervalMillis  for INTERVAL; default 100
 * @param minFreeDiskBytes     PUTs are refused with DISK_FULL below this much free space, other records
 *                             below half of it; default 64 MiB
 * @param maxJournalBytes      PUTs are refused with DISK_FULL once the journal is this big, other records
 *                             an eighth past it (0 = no limit)
 * @param defaultMaxMessages   per-queue limit when OPEN says 0; default 10,000,000
 * @param defaultMaxBytes      per-queue limit when OPEN says 0; default 8 GiB
 * @param tuning               roll cycle, clock and compaction knobs ({@link JournalTuning#defaults()})
 */
public record StoreConfig(Path directory, FsyncPolicy fsyncPolicy, long fsyncIntervalMillis, long minFreeDiskBytes,
                          long maxJournalBytes, long defaultMaxMessages, long defaultMaxBytes, JournalTuning tuning) {

    /** The original seven settings, with default tuning. */
    public StoreConfig(Path directory, FsyncPolicy fsyncPolicy, long fsyncIntervalMillis, long minFreeDiskBytes,
                       long maxJournalBytes, long defaultMaxMessages, long defaultMaxBytes) {
        this(directory, fsyncPolicy, fsyncIntervalMillis, minFreeDiskBytes, maxJournalBytes, defaultMaxMessages,
                defaultMaxBytes, JournalTuning.defaults());
    }

    public StoreConfig {
        if (tuning == null) {
            tuning = JournalTuning.defaults();
        }
    }

    public static StoreConfig defaults(Path directory) {
        return new StoreConfig(directory, FsyncPolicy.NONE, 100, 64L << 20, 0, 10_000_000L, 8L << 30);
    }

    public StoreConfig withFsync(FsyncPolicy policy) {
        return new StoreConfig(directory, policy, fsyncIntervalMillis, minFreeDiskBytes, maxJournalBytes,
                defaultMaxMessages, defaultMaxBytes, tuning);
    }

    public StoreConfig withMaxJournalBytes(long bytes) {
        return new StoreConfig(directory, fsyncPolicy, fsyncIntervalMillis, minFreeDiskBytes, bytes,
                defaultMaxMessages, defaultMaxBytes, tuning);
    }

    public StoreConfig withMinFreeDiskBytes(long bytes) {
        return new StoreConfig(directory, fsyncPolicy, fsyncIntervalMillis, bytes, maxJournalBytes,
                defaultMaxMessages, defaultMaxBytes, tuning);
    }

    public StoreConfig withDefaultLimits(long maxMessages, long maxBytes) {
        return new StoreConfig(directory, fsyncPolicy, fsyncIntervalMillis, minFreeDiskBytes, maxJournalBytes,
                maxMessages, maxBytes, tuning);
    }

    public StoreConfig withFsyncInterval(long millis) {
        return new StoreConfig(directory, fsyncPolicy, millis, minFreeDiskBytes, maxJournalBytes,
                defaultMaxMessages, defaultMaxBytes, tuning);
    }

    public StoreConfig withTuning(JournalTuning t) {
        return new StoreConfig(directory, fsyncPolicy, fsyncIntervalMillis, minFreeDiskBytes, maxJournalBytes,
                defaultMaxMessages, defaultMaxBytes, t);
    }
}
