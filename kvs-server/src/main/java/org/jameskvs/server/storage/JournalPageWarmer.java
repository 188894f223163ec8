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
 * Brings the journal's next pages into the page cache ahead of the writer, on a thread of its own.
 *
 * <p>Why: the store writes records through Chronicle's memory mapping of a sparse file. The first
 * write to each page takes a page fault in which the kernel reads the hole, that is zero-fills a
 * new page-cache page (plus readahead). Profiled under the store+delete benchmark this was about
 * two thirds of the event loop's time, all of it in the kernel's {@code memset} (much slower still
 * where a virtual machine backs guest memory lazily). Reading those pages here first, with plain
 * positioned reads, does that zero-filling off the event loop: its later write fault finds the page
 * cached and only marks it dirty. It moves work, it does not remove it: it pays where a core has
 * spare time, which a server answering one pipelined connection on its single store thread has.
 *
 * <p>It never writes and never changes what the journal holds; it only reads bytes the writer will
 * overwrite. The store thread publishes where it writes at each commit ({@link #writing}); this
 * thread keeps {@code aheadBytes} beyond that warm.
 */
final class JournalPageWarmer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JournalPageWarmer.class);
    private static final long ACTIVE_PAUSE_NANOS = 2_000_000;
    private static final long IDLE_PAUSE_NANOS = 50_000_000;

    /** Where the writer is: a file and the offset just past its last record. */
    private record Position(Path file, long end) {
    }

    private final long aheadBytes;
    private final Thread thread;
    private final ByteBuffer scratch = ByteBuffer.allocateDirect(64 << 10);
    private volatile Position position;
    private volatile boolean closed;
    private Path openFile;
    private FileChannel channel;
    private long warmedTo;

    JournalPageWarmer(long aheadBytes, String name) {
        this.aheadBytes = aheadBytes;
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Store thread: the writer's file and the end of its last record (cheap: one volatile write). */
    void writing(Path file, long end) {
        Position p = position;
        if (p == null || p.end != end || !p.file.equals(file)) {
            position = new Position(file, end);
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
                    warm(p);
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

    private void warm(Position p) throws IOException {
        if (!p.file.equals(openFile)) {
            closeChannel();
            channel = FileChannel.open(p.file, StandardOpenOption.READ);
            openFile = p.file;
            warmedTo = 0;
        }
        long from = Math.max(warmedTo, p.end);
        long to = Math.min(p.end + aheadBytes, channel.size());
        while (from < to && !closed) {
            int n = channel.read(scratch.clear().limit((int) Math.min(scratch.capacity(), to - from)), from);
            if (n <= 0) {
                break;
            }
            from += n;
        }
        warmedTo = from;
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
