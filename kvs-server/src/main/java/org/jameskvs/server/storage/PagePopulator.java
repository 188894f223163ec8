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
    private static final int EINVAL = 22;

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
        if (!works) {
            return false;
        }
        try {
            if (posix.madvise(address, length, MADV_POPULATE_WRITE) == 0) {
                return true;
            }
            int errno = posix.lastError();
            if (errno == EINVAL && (address & (PAGE - 1)) == 0) {
                works = false; // kernel older than 5.14
                LOG.info("madvise(MADV_POPULATE_WRITE) unsupported here; journal pages are warmed by reading");
            }
            return false;
        } catch (Throwable t) {
            works = false;
            LOG.info("madvise unavailable ({}); journal pages are warmed by reading", t.toString());
            return false;
        }
    }
}
