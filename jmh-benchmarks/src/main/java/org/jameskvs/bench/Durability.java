package org.jameskvs.bench;

/** Where an acknowledged store is when the acknowledgement leaves the server: the label of a report row. */
public enum Durability {
    /** Only in the server's memory (Redis without persistence): lost with the process. */
    MEMORY("memory only"),
    /** Written to the OS page cache before the ack: survives a kill of the process, not a power cut. */
    PAGE_CACHE("page cache"),
    /** Page cache before the ack, fsynced about once a second after it (Redis appendfsync everysec). */
    PAGE_CACHE_FSYNC_1S("page cache, fsync ~1 s later"),
    /** On disk (fsync) before the ack: survives a power cut (KVS fsync.policy=batch, Redis appendfsync always). */
    FSYNC("fsync before ack");

    private final String label;

    Durability(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
