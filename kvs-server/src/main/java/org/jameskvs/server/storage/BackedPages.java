package org.jameskvs.server.storage;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.MappedBytesStore;

/**
 * Room behind the journal's next pages, made sure of before a record is written into them.
 *
 * <p>Why: the journal writes through a shared memory mapping of its file. Where the file system has no
 * room for a page the writer touches first (a full disk, filled from outside faster than the store
 * looks at its free space), the kernel raises SIGBUS, and the JVM turns that into an
 * {@code InternalError} thrown later, somewhere else (the protocol decoder, in one run), after the
 * write seemed to succeed: the record was then acknowledged but never in the file
 * ({@code SuddenlyFullDiskTest}, before this class: 2 acknowledged puts missing after a restart).
 * {@code madvise(MADV_POPULATE_WRITE)} on the same pages fails instead, synchronously, with
 * {@link PagePopulator#EFAULT}, and where it succeeds the pages have their room (on tmpfs and on
 * disk file systems that allocate at page fault). So the store thread populates the pages from each
 * record to {@link #MARGIN} beyond it (Chronicle's own document headers and index entries go there)
 * before writing, a {@link #STEP} at a time, and refuses the record with DISK_FULL when the kernel
 * says there is no room. The page warmer ({@link JournalPageWarmer}) usually populated these pages
 * long before, so this costs a page-table walk per step.
 *
 * <p>Without the POSIX binding or on a kernel without {@code MADV_POPULATE_WRITE} (before 5.14)
 * nothing is checked, as before. Store thread only.
 */
final class BackedPages {
    /** Populated beyond each record's end: covers the next block's headers and Chronicle's index entries. */
    static final long MARGIN = 256L << 10;
    /** Populated at a time once the margin runs short. */
    static final long STEP = 256L << 10;

    private final PagePopulator populator;
    /** The mapping chunk the pages below {@link #backedTo} were populated in. */
    private MappedBytesStore store;
    /** File offset up to which the current chunk's pages are known to have room. */
    private long backedTo;

    BackedPages(PagePopulator populator) {
        this.populator = populator;
    }

    /**
     * Makes sure file offsets {@code [from, to + MARGIN)} of the journal's mapping have room behind
     * them (as far as the current mapping chunk reaches).
     *
     * @return null when they have, or when it cannot be told here; otherwise why not (no room)
     */
    String ensure(Bytes<?> bytes, long from, long to) {
        if (!populator.works() || !(bytes.bytesStore() instanceof MappedBytesStore s)) {
            return null;
        }
        if (s != store) {
            store = s;
            backedTo = 0;
        }
        long limit = s.safeLimit();
        long end = Math.min(to + MARGIN, limit);
        if (end <= backedTo) {
            return null;
        }
        long start = Math.max(Math.max(backedTo, from), s.start()) & -PagePopulator.PAGE;
        long want = Math.min(end + STEP, limit);
        if (start >= want) {
            return null;
        }
        int errno = populator.populateWrite(s.addressForWrite(start), want - start);
        if (errno == 0) {
            backedTo = want;
            return null;
        }
        if (errno == PagePopulator.EFAULT) {
            return "no room on the file system for the journal's pages at offsets " + start + ".." + want;
        }
        return null; // unsupported or transient: the write goes ahead as before
    }
}
