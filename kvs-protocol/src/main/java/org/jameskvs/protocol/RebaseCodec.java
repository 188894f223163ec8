package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * REBASE (0x0E). Request payload: {@code i64 seq, i64 digest} [, {@code i64 next position}: absent
 * from writers before it, read as 0]. OK answer: empty. The instance is the request reader.
 */
public final class RebaseCodec {
    private long lastSeq;
    private long digest;
    private long nextPosition;

    /** {@code nextPosition} 0: not sent (the copy keeps its own). */
    public static void writeRequest(ByteBuf out, long seq, int handle, long lastSeq, long digest, long nextPosition) {
        int start = Frames.beginRequest(out, Opcode.REBASE, seq, handle);
        out.writeLong(lastSeq);
        out.writeLong(digest);
        if (nextPosition > 0) {
            out.writeLong(nextPosition);
        }
        Frames.finishFrame(out, start);
    }

    public RebaseCodec wrap(ByteBuf in) {
        lastSeq = Wire.readLong(in);
        digest = Wire.readLong(in);
        nextPosition = in.readableBytes() >= 8 ? Wire.readLong(in) : 0;
        return this;
    }

    public long lastSeq() {
        return lastSeq;
    }

    public long digest() {
        return digest;
    }

    /** 0 when the request had none. */
    public long nextPosition() {
        return nextPosition;
    }
}
