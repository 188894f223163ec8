package org.jameskvs.server.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.LockSupport;

/**
 * Prepares the journal's next pages ahead of the writer, on a thread of its own, so the store
 * thread's writes find them ready.
 *
 * <p>Why: the store writes records through Chronicle's memory mapping of a sparse file. The first
 * write to each page takes a page fault in which the kernel allocates a page-cache page, zero-fills
 * it (the file has a hole there), marks it dirty and maps it. Profiled under the store+delete
 * benchmark this was about two thirds of the event loop's time, most of it in the kernel's
 * {@code memset} (much slower still where a virtual machine backs guest memory lazily, as on the
 * build machines: about 5-10 us per page).
 *
 * <p>How, in order of preference:
 * <ol>
 * <li><b>populate</b> the writer's own mapping ({@link WriterMapping}, published by the store thread
 * at each commit) with {@link PagePopulator} ({@code madvise(MADV_POPULATE_WRITE)}): the kernel does
 * all of the fault's work here, so the writer's stores take no fault at all;</li>
 * <li>beyond that mapping, or where the kernel cannot populate, <b>read</b> the pages into the page
 * cache (a read-only mapping of ours, {@code MADV_RANDOM}, populated step by step; plain positioned
 * reads where that is not available): the zero-filling happens here and the writer's fault only
 * maps the cached page.</li>
 * </ol>
 * It moves work, it does not remove it: it pays where a core has spare time, which a server
 * answering one pipelined connection on its single store thread has.
 *
 * <p>Populating marks the pages dirty (as zeros) before the writer fills them, so it is used only
 * without an fsync policy: with one, each sync would also write the pages ahead of the writer.
 *
 * <p>It never changes what the journal holds: it reads, and populating prepares pages without
 * writing to them. Work is done in steps of {@link #POPULATE_STEP}: the writer may wait for the step
 * it writes into, never for more (a plain read started the disk's 8 MB readahead, a ~20 ms stall of
 * the writer, report/latency.md). The store thread publishes where it writes at each commit ({@link #writing});
 * this thread keeps {@code aheadBytes} beyond that ready.
 */
final class JournalPageWarmer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalPageWarmer.class);
    private static final long ACTIVE_PAUSE_NANOS = 2_000_000;
    private static final long IDLE_PAUSE_NANOS = 50_000_000;
    /**
     * Prepare pages in steps of this much (64 pages): the kernel zero-fills a step's pages in one
     * call while they (or the mapping) are locked, and the store thread's write into one of them
     * waits for the whole step (about 0.3-0.6 ms here, where 8 MB took ~20 ms); and close() is
     * never kept waiting long.
     */
    private static final long POPULATE_STEP = 256L << 10;
    /** Reads beyond the populated part go through a mapping of ours in steps too (see {@link #warm}). */
    private final PagePopulator reader = PagePopulator.create();

    /** Where the writer is: a file, the offset just past its last record, and its mapping there (or null). */
    private record Position(Path file, long end, WriterMapping mapping) {
    }

    private final long aheadBytes;
    private final Thread thread;
    private final PagePopulator populator;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(64 << 10);
    private volatile Position position;
    private volatile boolean closed;
    private Path openFile;
    private FileChannel channel;
    private long warmedTo;
    private WriterMapping populatedMapping;
    private long populatedTo;

    /**
     * @param populate whether to populate the writer's mapping: populated pages are dirty (zeros)
     *                 before the writer fills them, so with an fsync policy each sync would also
     *                 write those pages ahead of the writer; such journals are warmed by reading
     */
    JournalPageWarmer(long aheadBytes, String name, boolean populate) {
        this.aheadBytes = aheadBytes;
        this.populator = populate ? PagePopulator.create() : PagePopulator.none();
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the writer's mapping is worth publishing (the kernel can populate it). */
    boolean populates() {
        return populator.works();
    }

    /**
     * Store thread: the writer's file, the end of its last record and its mapping of that part of
     * the file, or null (cheap: one volatile write).
     */
    void writing(Path file, long end, WriterMapping mapping) {
        Position p = position;
        if (p == null || p.end != end || !p.file.equals(file) || p.mapping != mapping) {
            position = new Position(file, end, mapping);
        }
    }

    private void run() {
        Position seen = null;
        while (!closed) {
            Position p = position;
            boolean active = p != null && p != seen;
            seen = p;
            if (p != null) {
                try {
                    long readFrom = populate(p);
                    warm(p, readFrom);
                } catch (IOException | RuntimeException e) {
                    // Only a lost optimisation: the writer faults the pages in itself.
                    LOG.debug("journal page warming skipped for {}: {}", p.file, e.toString());
                    closeChannel();
                }
            }
            LockSupport.parkNanos(active ? ACTIVE_PAUSE_NANOS : IDLE_PAUSE_NANOS);
        }
        closeChannel();
    }

    /** Populates what the writer's mapping covers of the next {@code aheadBytes}; @return where reading should take over. */
    private long populate(Position p) {
        WriterMapping m = p.mapping;
        if (m == null || !populator.works() || p.end < m.start()) {
            return p.end;
        }
        if (m != populatedMapping) {
            populatedMapping = m;
            populatedTo = 0;
            // The store thread's own faults through this mapping must never start a readahead (see
            // PagePopulator#adviseRandom); our populates through it then prepare exactly their step.
            populator.adviseRandom(m.address(m.start()), m.end() - m.start());
        }
        // page-aligned bounds: madvise takes page-aligned addresses (the mapping's ends are aligned)
        long to = Math.min(p.end + aheadBytes + PagePopulator.PAGE - 1 & -PagePopulator.PAGE, m.end());
        long from = Math.max(populatedTo, p.end & -PagePopulator.PAGE);
        while (from < to && !closed) {
            long n = Math.min(POPULATE_STEP, to - from);
            if (!populator.populate(m.address(from), n)) {
                break;
            }
            from += n;
        }
        populatedTo = Math.max(populatedTo, from);
        return Math.max(p.end, from);
    }

    private void warm(Position p, long readFrom) throws IOException {
        if (!p.file.equals(openFile)) {
            closeChannel();
            channel = FileChannel.open(p.file, StandardOpenOption.READ);
            openFile = p.file;
            warmedTo = 0;
        }
        long from = Math.max(warmedTo, readFrom);
        long to = Math.min(p.end + aheadBytes, channel.size());
        long alignedFrom = from & -PagePopulator.PAGE;
        long alignedTo = to & -PagePopulator.PAGE;
        if (alignedTo > alignedFrom
                && reader.populateRead(p.file, alignedFrom, alignedTo - alignedFrom, POPULATE_STEP, () -> closed)) {
            // Never a plain read here: it would start the device's readahead (8 MB in one call on
            // the build machines), see PagePopulator#populateRead.
            warmedTo = Math.max(warmedTo, alignedTo);
            return;
        }
        while (from < to && !closed) {
            int n = channel.read(scratch.clear().limit((int) Math.min(scratch.capacity(), to - from)), from);
            if (n <= 0) {
                break;
            }
            from += n;
        }
        warmedTo = Math.max(warmedTo, from);
    }

    private void closeChannel() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // a read-only channel: nothing to lose
            }
            channel = null;
            openFile = null;
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
