package org.jameskvs.server.storage;

import java.nio.file.Path;
import java.util.Map;

/**
 * A test seam on durability: told of every fsync the journal makes, on the thread that made it,
 * after every journal file written since the previous one was forced and before the fsync returns
 * to its caller (so with {@code fsync.policy=batch}, before any response of the synced block is
 * sent, and with the writer stopped). What the files hold at that moment is exactly what a power
 * cut would leave. Tests use it to block an fsync, or to copy the durable state aside and restart
 * from it as if the power had failed. Nothing installs one in production (one volatile read per
 * fsync).
 */
public interface FsyncObserver {
    /**
     * @param directory the journal directory
     * @param dataEnds  each journal file and the offset just past its last record (the rest of a
     *                  preallocated file is zeros)
     */
    void fsynced(Path directory, Map<Path, Long> dataEnds);

    /** Installs the observer of every store in this JVM (null: none). */
    static void install(FsyncObserver observer) {
        Installed.observer = observer;
    }

    /** Holder of the installed observer. */
    final class Installed {
        static volatile FsyncObserver observer;

        private Installed() {
        }
    }
}
