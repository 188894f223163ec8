package org.jameskvs.server.storage;

import io.netty.util.internal.PlatformDependent;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A read-only memory mapping of one stretch of a cycle file, moved along as reads need it. Reads of
 * journal records (an id to confirm a hash match on every DELETE, bodies for GET and READ) then
 * cost a memory copy instead of one {@code pread} system call each; the pages are the same page
 * cache that Chronicle's own mapping writes into.
 *
 * <p>The mapping never escapes this class (callers get it only for the duration of one read on the
 * store's thread), so it is unmapped at once when the window moves or the file closes, rather than
 * whenever the GC gets to it: a deleted journal file then really frees its disk space.
 *
 * <p>Only bytes of records already written are ever read, and those lie inside the file whatever
 * Chronicle does to the file's tail (it may shrink a finished file to its used size), so a read can
 * never touch a page beyond the end of the file.
 */
final class MappedReadWindow {
    /** Windows start at multiples of this, so records near a boundary still fit the next window. */
    private static final long ALIGN = 32L << 20;
    private static final long SIZE = 2 * ALIGN;

    private final FileChannel channel;
    private MappedByteBuffer map;
    private long start;
    private long end;

    MappedReadWindow(FileChannel channel) {
        this.channel = channel;
    }

    /**
     * Maps the file range {@code [position, position + length)} if it is not mapped yet.
     *
     * @return the index of {@code position} in {@link #buffer()}, or -1 when the range cannot be
     *         mapped (longer than a window, or past the file's current end): read it another way
     */
    int locate(long position, int length) throws IOException {
        if (map != null && position >= start && position + length <= end) {
            return (int) (position - start);
        }
        long newStart = position & -ALIGN;
        long newEnd = Math.min(newStart + SIZE, channel.size());
        if (position + length > newEnd) {
            return -1;
        }
        unmap();
        map = channel.map(FileChannel.MapMode.READ_ONLY, newStart, newEnd - newStart);
        start = newStart;
        end = newEnd;
        return (int) (position - start);
    }

    /** The current mapping; valid until the next {@link #locate} or {@link #close}. Absolute reads only, or reset position and limit. */
    MappedByteBuffer buffer() {
        return map;
    }

    void close() {
        unmap();
    }

    private void unmap() {
        if (map != null) {
            PlatformDependent.freeDirectBuffer(map);
            map = null;
        }
    }
}
