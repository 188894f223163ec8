package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * READ (0x07). Request payload: {@code i64 fromPosition, i32 maxCount, i32 maxBytes, i64 readyBefore}.
 * OK answer: {@code i64 nextPosition, i32 count}, then count {@link MessageRecord}s.
 * <p>The instance is the request reader, a flyweight reused per request. Not thread-safe.
 */
public final class ReadCodec {
    public static final int FROM_POSITION_OFFSET = 0;
    public static final int MAX_COUNT_OFFSET = 8;
    public static final int MAX_BYTES_OFFSET = 12;
    public static final int READY_BEFORE_OFFSET = 16;
    public static final int REQUEST_LENGTH = 24;
    /** OK answer, from the payload start. */
    public static final int OK_NEXT_POSITION_OFFSET = 0;
    public static final int OK_COUNT_OFFSET = 8;
    public static final int OK_RECORDS_OFFSET = 12;

    private long fromPosition;
    private int maxCount;
    private int maxBytes;
    private long readyBefore;

    public static void writeRequest(ByteBuf out, long seq, int handle, long fromPosition, int maxCount, int maxBytes,
                                    long readyBefore) {
        writeRequest(out, seq, handle, 0, fromPosition, maxCount, maxBytes, readyBefore);
    }

    /** With header flags: {@link RequestDescriptor#FLAG_UNCOMMITTED} reads past the commit point (a read handle). */
    public static void writeRequest(ByteBuf out, long seq, int handle, int flags, long fromPosition, int maxCount,
                                    int maxBytes, long readyBefore) {
        int start = Frames.beginRequest(out, Opcode.READ, seq, handle, flags);
        out.writeLong(fromPosition);
        out.writeInt(maxCount);
        out.writeInt(maxBytes);
        out.writeLong(readyBefore);
        Frames.finishFrame(out, start);
    }

    /** @throws MalformedPayloadException when truncated or a limit is not positive */
    public ReadCodec wrap(ByteBuf in) {
        fromPosition = Wire.readLong(in);
        maxCount = Wire.readInt(in);
        maxBytes = Wire.readInt(in);
        readyBefore = Wire.readLong(in);
        if (maxCount <= 0 || maxBytes <= 0) {
            throw new MalformedPayloadException("maxCount and maxBytes must be positive");
        }
        return this;
    }

    public long fromPosition() {
        return fromPosition;
    }

    public int maxCount() {
        return maxCount;
    }

    public int maxBytes() {
        return maxBytes;
    }

    public long readyBefore() {
        return readyBefore;
    }

    /** Starts the OK answer; the payload follows ({@link #beginRecords}), then {@link Frames#finishFrame}. */
    public static int beginOk(ByteBuf out, long seq, long txn) {
        return Frames.beginResponse(out, Opcode.READ.code(), Status.OK, seq, txn);
    }

    /**
     * Writes the OK payload's next position and count as placeholders; the records follow. Returns
     * the payload's start for {@link #endRecords}.
     */
    public static int beginRecords(ByteBuf out) {
        int mark = out.writerIndex();
        out.writeLong(0).writeInt(0);
        return mark;
    }

    /** Fills in the next position and the count of the records written since {@link #beginRecords}. */
    public static void endRecords(ByteBuf out, int mark, long nextPosition, int count) {
        out.setLong(mark + OK_NEXT_POSITION_OFFSET, nextPosition);
        out.setInt(mark + OK_COUNT_OFFSET, count);
    }

    public static long readOkNextPosition(ByteBuf payload) {
        return Wire.readLong(payload);
    }

    /** After {@link #readOkNextPosition}: the count, checked against the bytes before anything is allocated for it. */
    public static int readOkCount(ByteBuf payload) {
        int count = Wire.readInt(payload);
        if (count < 0 || (long) count * MessageRecordDescriptor.MIN_LENGTH > payload.readableBytes()) {
            throw new MalformedPayloadException("count " + count + " does not fit in " + payload.readableBytes() + " bytes");
        }
        return count;
    }
}
