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
 * <p>With an fsync policy the writer's mapping is populated too, but only
 * {@link #SYNCED_POPULATE_AHEAD} ahead of the writer (whole steps), and read beyond that. Why
 * populate at all: a page the writer dirties in a hole of the sparse file has no disk block yet,
 * so each fsync also had to allocate blocks for the pages written since the last one and write the
 * inode's extent metadata (4.0 device write requests per fsync on the build machine, 3.5 with
 * populating, report/fsync-cpu.md). Populating for writing is a write fault without the store: the
 * filesystem reserves (ext4's delayed allocation) or allocates the blocks there, the next fsync
 * writes those pages (zeros) and allocates them at once, and the writer then overwrites allocated
 * blocks. Why limited: populated pages are dirty (as zeros) before the writer fills them, so each
 * fsync also writes what was populated since the previous one: a step at a time,
 * {@code SYNCED_POPULATE_AHEAD} ahead, that is one step of zeros now and then, where populating
 * all of {@code aheadBytes} (32 MB) would make the first sync write 32 MB of zeros and keep the
 * filesystem's dirty data that much larger.
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
    static final long POPULATE_STEP = 256L << 10;
    /**
     * With an fsync policy, how far ahead of the writer its mapping is populated (in whole steps,
     * so between three and four steps are ready): far enough that the writer, about 20 KB per block
     * at 1 KB mails, finds its blocks allocated, short enough that the zeros a sync writes ahead of
     * it stay one step at a time.
     */
    static final long SYNCED_POPULATE_AHEAD = 4 * POPULATE_STEP;
    /** Reads beyond the populated part go through a mapping of ours in steps too (see {@link #warm}). */
    private final PagePopulator reader = PagePopulator.create();

    /** Where the writer is: a file, the offset just past its last record, and its mapping there (or null). */
    private record Position(Path file, long end, WriterMapping mapping) {
    }

    private final long aheadBytes;
    /** How far ahead of the writer its mapping is populated: {@code aheadBytes}, or less with an fsync policy. */
    private final long populateAhead;
    /** Whether to populate in whole steps only (with an fsync policy: never a sliver per commit). */
    private final boolean wholeSteps;
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
     * @param synced whether the journal has an fsync policy: populated pages are dirty (zeros) before
     *               the writer fills them and each sync writes them, so its mapping is populated only
     *               {@link #SYNCED_POPULATE_AHEAD} ahead, in whole steps (read beyond)
     */
    JournalPageWarmer(long aheadBytes, String name, boolean synced) {
        this.aheadBytes = aheadBytes;
        this.populateAhead = synced ? Math.min(aheadBytes, SYNCED_POPULATE_AHEAD) : aheadBytes;
        this.wholeSteps = synced;
        this.populator = PagePopulator.create();
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

    /** Populates what the writer's mapping covers of the next {@code populateAhead}; @return where reading should take over. */
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
        long want = Math.min(p.end + populateAhead + PagePopulator.PAGE - 1 & -PagePopulator.PAGE, m.end());
        long from = Math.max(populatedTo, p.end & -PagePopulator.PAGE);
        // whole steps (up to the mapping's end): a populated sliver per commit would give every sync
        // its own allocation again
        long to = wholeSteps && want < m.end() && want > from ? from + (want - from) / POPULATE_STEP * POPULATE_STEP : want;
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
