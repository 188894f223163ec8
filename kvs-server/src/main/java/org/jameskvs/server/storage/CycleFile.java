package org.jameskvs.server.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One Chronicle cycle file of the journal, with what space reclamation needs: how many live
 * references (message PUT/COPY records, latest REPLACE records, latest queue CREATE records) still
 * point into it. A file can go once that count is zero and every older file is gone.
 */
final class CycleFile {
    /** Small in-memory number used in locations (never reused while the store runs). */
    final int fileNo;
    final int cycle;
    final Path path;
    long liveRefs;
    long liveBytes;
    /** File offset just past our last record: the bytes of the file actually used. */
    long end;
    /**
     * Where the file's first write ended: Chronicle's header and index (hundreds of KiB) plus that
     * write. Counted in the journal's bytes like the rest; the reserve grows by the newest file's.
     */
    long headerBytes;
    boolean dirty;
    private FileChannel channel;
    private MappedReadWindow window;

    CycleFile(int fileNo, int cycle, Path path) {
        this.fileNo = fileNo;
        this.cycle = cycle;
        this.path = path;
    }

    /** Positioned reads go through a plain channel: the page cache is shared with Chronicle's mapping. */
    FileChannel channel() throws IOException {
        if (channel == null) {
            channel = FileChannel.open(path, StandardOpenOption.READ);
        }
        return channel;
    }

    /** Memory-mapped reads of this file (see {@link MappedReadWindow}); store thread only. */
    MappedReadWindow window() throws IOException {
        if (window == null) {
            window = new MappedReadWindow(channel());
        }
        return window;
    }

    void closeChannel() {
        if (window != null) {
            window.close();
            window = null;
        }
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing a read channel: nothing to lose
            }
            channel = null;
        }
    }

    @Override
    public String toString() {
        return path.getFileName() + "{no=" + fileNo + ", refs=" + liveRefs + ", live=" + liveBytes + "B, end=" + end + "}";
    }
}
