package org.jameskvs.server.storage;

import net.openhft.posix.PosixAPI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code madvise(MADV_POPULATE_WRITE)} (Linux 5.14+) through Chronicle's POSIX binding: prefaults a
 * range of a shared file mapping for writing, exactly as a write to each page would (page-cache
 * page allocated, zero-filled if new, marked dirty, mapped writable), but without writing anything:
 * the file's content is unchanged. The writer's later stores to those pages then take no fault.
 * Where the kernel or the binding cannot do it, {@link #works()} turns false and callers fall back
 * to reading the pages.
 */
final class PagePopulator {
    private static final Logger LOG = LoggerFactory.getLogger(PagePopulator.class);
    static final long PAGE = 4096;
    private static final int MADV_POPULATE_WRITE = 23;
    private static final int MADV_POPULATE_READ = 22;
    private static final int MADV_RANDOM = 1;
    private static final int O_RDONLY = 0;
    private static final int PROT_READ = 1;
    private static final int MAP_SHARED = 1;
    private static final int EINVAL = 22;
    /** madvise(MADV_POPULATE_*): populating failed because a SIGBUS would have been raised on access. */
    static final int EFAULT = 14;

    private final PosixAPI posix;
    private volatile boolean works;

    private PagePopulator(PosixAPI posix) {
        this.posix = posix;
        this.works = posix != null;
    }

    static PagePopulator create() {
        try {
            return new PagePopulator(PosixAPI.posix());
        } catch (Throwable t) {
            LOG.debug("no POSIX binding for madvise: {}", t.toString());
            return new PagePopulator(null);
        }
    }

    /** One that never populates (callers read the pages instead). */
    static PagePopulator none() {
        return new PagePopulator(null);
    }

    boolean works() {
        return works;
    }

    /**
     * Populates {@code [address, address + length)}; {@code address} must be page-aligned.
     *
     * @return false if it failed (nothing is changed either way; an unsupported kernel switches it off)
     */
    boolean populate(long address, long length) {
        return populateWrite(address, length) == 0;
    }

    /**
     * Populates {@code [address, address + length)} for writing; {@code address} must be page-aligned.
     *
     * @return 0 when done; the errno when the kernel refused ({@link #EFAULT}: a write there would
     *         raise SIGBUS, as on a full file system; an unsupported kernel switches it off); -1 when
     *         it cannot populate at all ({@link #works()} false)
     */
    int populateWrite(long address, long length) {
        if (!works) {
            return -1;
        }
        try {
            if (posix.madvise(address, length, MADV_POPULATE_WRITE) == 0) {
                return 0;
            }
            int errno = posix.lastError();
            if (errno == EINVAL && (address & (PAGE - 1)) == 0) {
                works = false; // kernel older than 5.14
                LOG.info("madvise(MADV_POPULATE_WRITE) unsupported here; journal pages are warmed by reading");
            }
            return errno;
        } catch (Throwable t) {
            works = false;
            LOG.info("madvise unavailable ({}); journal pages are warmed by reading", t.toString());
            return -1;
        }
    }

    /**
     * {@code madvise(MADV_RANDOM)} on a mapping (page-aligned): a page fault through it reads in
     * that one page, never the kernel's read-around or readahead. Why: the journal writer's mapping
     * is a plain shared file mapping, and a fault of the store thread on a page not yet in the page
     * cache (or on one the kernel marked to start the next readahead) zero-filled the device's whole
     * readahead window, 8 MB on the build machines' disk, in the store thread: ~20 ms of CPU with 2-4
     * page faults (report/latency.md, "Where the tail comes from", point 5). Only a hint: the
     * mapping's content is unchanged.
     *
     * @return false if it failed
     */
    boolean adviseRandom(long address, long length) {
        if (posix == null || length <= 0) {
            return false;
        }
        try {
            return posix.madvise(address, length & -PAGE, MADV_RANDOM) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * Brings {@code [offset, offset + length)} of {@code file} into the page cache (zero-filled where
     * the file has a hole) through a read-only mapping of its own marked {@code MADV_RANDOM}, in
     * steps of {@code step} bytes: exactly those pages, never the kernel's readahead around them.
     * Why not a plain read: a read of the journal's hole starts the device's readahead, 8 MB on the
     * build machines' disk, zero-filled in one call while those pages stay locked, and the store
     * thread's write into one of them waited for all of it (the periodic ~20 ms stalls of
     * report/latency.md). {@code offset} must be page-aligned; the range must lie inside the file.
     *
     * @return false if it could not (nothing changed; callers read instead)
     */
    boolean populateRead(java.nio.file.Path file, long offset, long length, long step, java.util.function.BooleanSupplier stop) {
        if (posix == null || length <= 0 || (offset & (PAGE - 1)) != 0) {
            return false;
        }
        try {
            int fd = posix.open(file.toString(), O_RDONLY, 0);
            if (fd < 0) {
                return false;
            }
            try {
                long address = posix.mmap(0, length, PROT_READ, MAP_SHARED, fd, offset);
                if (address == 0 || address == -1) {
                    return false;
                }
                try {
                    if (posix.madvise(address, length, MADV_RANDOM) != 0) {
                        return false;
                    }
                    for (long done = 0; done < length && !stop.getAsBoolean(); done += step) {
                        if (posix.madvise(address + done, Math.min(step, length - done), MADV_POPULATE_READ) != 0) {
                            return false;
                        }
                    }
                    return true;
                } finally {
                    posix.munmap(address, length);
                }
            } finally {
                posix.close(fd);
            }
        } catch (Throwable t) {
            LOG.debug("madvise(MADV_POPULATE_READ) unavailable: {}", t.toString());
            return false;
        }
    }
}
