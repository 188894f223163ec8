package org.jameskvs.server.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Unlinks dead journal files on a thread of its own, so that the store thread never waits for it.
 *
 * <p>Why: unlinking a cycle file frees its page-cache pages and its disk blocks inside the
 * {@code unlink} call (with the {@code discard} mount option the blocks are also trimmed there). On
 * the build VM that took 35-144 ms per file of about 0.5 GB, and maintenance stalled 290-900 ms when
 * compaction let three files go at once; on the store thread that stalls every connection of the
 * server, and a busy server rolls a file every five minutes.
 *
 * <p>How: the store thread only <em>renames</em> the file out of the journal (one directory
 * operation: from then on neither Chronicle nor a restart sees it as a journal file, since both only
 * look at {@code *.cq4}) and hands the new name to this thread, which unlinks it. Removing a file
 * that holds nothing live is safe at any moment, so doing it later changes nothing in the crash
 * contract; a file renamed but not yet unlinked when the process stops is removed the next time the
 * journal opens ({@link #removeLeftovers}).
 */
final class DeadFileRemover implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeadFileRemover.class);
    /** Appended to a dead file's name: it is no longer {@code *.cq4}. */
    static final String SUFFIX = ".deleted";
    private static final long CLOSE_WAIT_MILLIS = 10_000;

    private final LinkedBlockingQueue<Path> files = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    DeadFileRemover(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Store thread: takes {@code file} out of the journal now and has it unlinked later. Cheap (a
     * rename). A file that does not exist is ignored.
     */
    void remove(Path file) throws IOException {
        if (!Files.exists(file)) {
            return;
        }
        Path dead = file.resolveSibling(file.getFileName() + SUFFIX);
        Files.move(file, dead, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        if (closed) {
            unlink(dead); // no thread left to do it
        } else {
            files.add(dead);
        }
    }

    /** Removes the dead files a stopped process left renamed but not unlinked (call before the journal opens). */
    static void removeLeftovers(Path directory) throws IOException {
        if (!Files.isDirectory(directory)) {
            return;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(directory, "*" + SUFFIX)) {
            for (Path p : s) {
                unlink(p);
            }
        }
    }

    /** Files handed over and not yet unlinked (tests). */
    int pending() {
        return files.size();
    }

    private void run() {
        while (!closed) {
            try {
                Path p = files.poll(100, TimeUnit.MILLISECONDS);
                if (p != null) {
                    unlink(p);
                }
            } catch (InterruptedException e) {
                break; // close() wakes the thread this way: it drains what is queued below
            }
        }
        Path p;
        while ((p = files.poll()) != null) {
            unlink(p);
        }
    }

    private static void unlink(Path p) {
        try {
            long bytes = Files.size(p);
            long t0 = System.nanoTime();
            Files.deleteIfExists(p);
            LOG.info("Removed dead journal file {} ({} MB) in {} ms", p.getFileName(), bytes >> 20,
                    (System.nanoTime() - t0) / 1_000_000);
        } catch (IOException e) {
            // Only space not yet given back: the next open of the journal removes it (removeLeftovers).
            LOG.warn("Could not remove dead journal file {}: {}", p, e.toString());
        }
    }

    /**
     * Unlinks what is still queued (waits at most 10 s; anything left is removed at the next open).
     * Wakes the thread instead of letting its poll run out: a store closes in microseconds, not in
     * up to 100 ms (the simulation closes and reopens thousands of stores).
     */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(CLOSE_WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
