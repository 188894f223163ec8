package org.jameskvs.server.storage;

/**
 * Where the journal writer's memory mapping of its current file lies: file offsets
 * {@code [start, end)} are mapped at {@code baseAddress} onwards (Chronicle maps a file in chunks;
 * this is the chunk the last block went to). The store thread keeps the chunk reserved while it is
 * published, so the mapping stays valid for the {@link JournalPageWarmer}, which only ever passes
 * these addresses to the kernel to populate, never reads or writes through them. A populate still
 * in flight when the store thread publishes the next chunk and releases this one is harmless:
 * populating never changes data, and the kernel fails it on a range no longer mapped.
 */
record WriterMapping(long baseAddress, long start, long end) {
    /** Address of a file offset inside the mapping. */
    long address(long fileOffset) {
        return baseAddress + (fileOffset - start);
    }
}
