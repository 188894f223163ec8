package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * REBASE (0x0E). Request payload: {@code i64 seq, i64 digest} [, {@code i64 next position}: absent
 * from writers before it, read as 0]; with flag {@link RequestDescriptor#FLAG_IF_AT}: {@code i64 seq,
 * i64 digest, i64 next position, i64 expected digest}. OK answer: empty. The instance is the request reader.
 */
public final class RebaseCodec {
    private long lastSeq;
    private long digest;
    private long nextPosition;
    private boolean conditional;
    private long expectedDigest;

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

    /** A conditional REBASE ({@link RequestDescriptor#FLAG_IF_AT}): only if the copy is at ({@code lastSeq}, {@code expectedDigest}). */
    public static void writeIfAt(ByteBuf out, long seq, int handle, long lastSeq, long expectedDigest, long digest) {
        int start = Frames.beginRequest(out, Opcode.REBASE, seq, handle, RequestDescriptor.FLAG_IF_AT);
        out.writeLong(lastSeq);
        out.writeLong(digest);
        out.writeLong(0);
        out.writeLong(expectedDigest);
        Frames.finishFrame(out, start);
    }

    public RebaseCodec wrap(ByteBuf in) {
        return wrap(in, 0);
    }

    /** Reads the payload of a request with these header flags. */
    public RebaseCodec wrap(ByteBuf in, int flags) {
        lastSeq = Wire.readLong(in);
        digest = Wire.readLong(in);
        conditional = (flags & RequestDescriptor.FLAG_IF_AT) != 0;
        if (conditional) {
            nextPosition = Wire.readLong(in);
            expectedDigest = Wire.readLong(in);
        } else {
            nextPosition = in.readableBytes() >= 8 ? Wire.readLong(in) : 0;
            expectedDigest = 0;
        }
        return this;
    }

    /** Whether the request is conditional ({@link RequestDescriptor#FLAG_IF_AT}). */
    public boolean conditional() {
        return conditional;
    }

    /** A conditional request: the digest the copy must have at {@link #lastSeq()}. */
    public long expectedDigest() {
        return expectedDigest;
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
