package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * LIST (0x09). Request payload: empty, handle 0. OK answer: {@code i32 count}, then count rows of
 * {@code string name, i64 size, i64 txn}. {@link Row} reads one row.
 */
public final class ListCodec {
    /** Smallest row: empty name, size, txn. */
    public static final int MIN_ROW_LENGTH = 2 + 8 + 8;

    private ListCodec() {
    }

    public static void writeRequest(ByteBuf out, long seq) {
        Requests.empty(out, Opcode.LIST, seq, 0);
    }

    /** Starts the OK answer with its count; write {@code count} rows, then {@link Frames#finishFrame}. */
    public static int beginOk(ByteBuf out, long seq, int count) {
        int start = Frames.beginResponse(out, Opcode.LIST.code(), Status.OK, seq, 0);
        out.writeInt(count);
        return start;
    }

    public static void writeRow(ByteBuf out, String name, long size, long txn) {
        Wire.writeString(out, name);
        out.writeLong(size);
        out.writeLong(txn);
    }

    /** The count, checked against the bytes before anything is allocated for it. */
    public static int readOkCount(ByteBuf payload) {
        int count = Wire.readInt(payload);
        if (count < 0 || (long) count * MIN_ROW_LENGTH > payload.readableBytes()) {
            throw new MalformedPayloadException("count " + count + " does not fit in " + payload.readableBytes() + " bytes");
        }
        return count;
    }

    /** Reader of one row. */
    public static final class Row {
        private String name;
        private long size;
        private long txn;

        public Row wrap(ByteBuf p) {
            name = Wire.readString(p);
            size = Wire.readLong(p);
            txn = Wire.readLong(p);
            return this;
        }

        public String name() {
            return name;
        }

        public long size() {
            return size;
        }

        public long txn() {
            return txn;
        }
    }
}
