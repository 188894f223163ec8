package org.jameskvs.server.storage;

/** When the journal is forced to disk. See {@link QueueStore} for what each promises. */
public enum FsyncPolicy {
    /** Never forced by us: the OS writes mapped pages back when it likes (survives a process kill, not a power cut). */
    NONE,
    /** Forced every {@code fsyncIntervalMillis} (a power cut loses at most that window). */
    INTERVAL,
    /** Forced at the end of every block, before its responses are sent (a response means on disk). */
    BATCH
}
