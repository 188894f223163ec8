package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The tail that OPEN and STAT answers share: {@code u8 queue flags, i64 last seq, i64 digest}, what
 * two copies are compared by (equal iff epoch, last seq and digest are). The flags byte was added
 * after the fields before it: a payload that ends before it reads it as 0; version 2 always sends
 * last seq and digest after it.
 */
public abstract class CopyCheckAnswer {
    private int queueFlags;
    private long lastSeq;
    private long digest;

    static void writeCheck(ByteBuf out, int queueFlags, long lastSeq, long digest) {
        out.writeByte(queueFlags);
        out.writeLong(lastSeq);
        out.writeLong(digest);
    }

    final void readCheck(ByteBuf p) {
        queueFlags = p.isReadable() ? p.readUnsignedByte() : 0;
        lastSeq = Wire.readLong(p);
        digest = Wire.readLong(p);
    }

    public final int queueFlags() {
        return queueFlags;
    }

    public final long lastSeq() {
        return lastSeq;
    }

    public final long digest() {
        return digest;
    }
}
