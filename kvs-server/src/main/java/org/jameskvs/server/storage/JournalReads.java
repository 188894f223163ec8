package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.function.LongFunction;

import static org.jameskvs.server.storage.JournalRecordDescriptor.ID_LENGTH;

/**
 * Positioned reads of journal records by location ({@link Journal}): through the file's mapped read
 * window when it holds the bytes, else with positioned reads on the file's channel. Store thread only
 * (one scratch buffer).
 */
final class JournalReads {
    private final LongFunction<CycleFile> files;
    private final ByteBuffer small = ByteBuffer.allocateDirect(512);

    /** @param files the cycle file a location is in */
    JournalReads(LongFunction<CycleFile> files) {
        this.files = files;
    }

    /** Copies {@code length} bytes at {@code offsetInRecord} of the record at {@code location} into {@code out}. */
    void readInto(long location, long offsetInRecord, int length, ByteBuf out) throws IOException {
        CycleFile f = files.apply(location);
        long pos = Journal.offset(location) + offsetInRecord;
        out.ensureWritable(length);
        MappedReadWindow w = f.window();
        int at = w.locate(pos, length);
        if (at >= 0) {
            ByteBuffer map = w.buffer();
            map.limit(at + length).position(at);
            out.writeBytes(map);
            return;
        }
        FileChannel ch = f.channel();
        int done = 0;
        while (done < length) {
            int n = out.writeBytes(ch, pos + done, length - done);
            if (n < 0) {
                throw new IOException("journal file " + f.path + " ends before " + (pos + length));
            }
            done += n;
        }
    }

    /**
     * A few bytes of a record as a buffer positioned at them (absolute reads from its position): the
     * mapped window when it can hold them, else a positioned read into a scratch buffer.
     */
    private ByteBuffer readSmall(long location, long offsetInRecord, int length) throws IOException {
        CycleFile f = files.apply(location);
        long pos = Journal.offset(location) + offsetInRecord;
        MappedReadWindow w = f.window();
        int at = w.locate(pos, length);
        if (at >= 0) {
            ByteBuffer map = w.buffer();
            map.limit(at + length).position(at);
            return map;
        }
        FileChannel ch = f.channel();
        ByteBuffer bb = small.clear().limit(length);
        while (bb.hasRemaining()) {
            if (ch.read(bb, pos + bb.position()) < 0) {
                throw new IOException("journal file " + f.path + " ends before " + (pos + length));
            }
        }
        return bb.flip();
    }

    int readInt(long location, long offsetInRecord) throws IOException {
        ByteBuffer bb = readSmall(location, offsetInRecord, 4);
        return bb.getInt(bb.position());
    }

    int readUnsignedByte(long location, long offsetInRecord) throws IOException {
        ByteBuffer bb = readSmall(location, offsetInRecord, 1);
        return bb.get(bb.position()) & 0xFF;
    }

    /** True when the PUT/DELETE/REPLACE record at {@code location} carries exactly this id. */
    boolean idEquals(long location, byte[] id) throws IOException {
        ByteBuffer bb = readSmall(location, ID_LENGTH, 1 + id.length);
        int p = bb.position();
        if ((bb.get(p) & 0xFF) != id.length) {
            return false;
        }
        for (int i = 0; i < id.length; i++) {
            if (bb.get(p + 1 + i) != id[i]) {
                return false;
            }
        }
        return true;
    }
}
