package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The fields a mutation's payload starts with when its header has {@link RequestDescriptor#FLAG_SEQUENCED}
 * (PUT, DELETE, REPLACE, CLEAR): {@code i64 queue seq}. The one place that writes and reads them.
 * A flag that adds a field after the queue seq adds it here: to {@link #wrap} (the server reads
 * every prefix there) and to a {@link #begin} variant, after which a caller writes the operation's
 * payload with its codec's {@code writePayload} ({@link PutCodec#writePayload},
 * {@link DeleteCodec#writePayload}, {@link ReplaceCodec#writePayload}; CLEAR has none).
 * <p>Reader: a flyweight, reused per request ({@link #wrap}); not thread-safe.
 */
public final class SequencedPrefix {
    /** Offset of the queue seq from the start of the payload. */
    public static final int QUEUE_SEQ_OFFSET = 0;
    /** Bytes of the prefix. */
    public static final int LENGTH = 8;

    private long queueSeq;

    /** True for the operations that may carry the prefix. */
    public static boolean isSequenceable(Opcode op) {
        return op == Opcode.PUT || op == Opcode.DELETE || op == Opcode.REPLACE || op == Opcode.CLEAR;
    }

    /**
     * Starts a request frame of {@code op} with these header flags; when they have
     * {@link RequestDescriptor#FLAG_SEQUENCED}, writes the prefix with {@code queueSeq}. The caller
     * writes the operation's payload and finishes the frame ({@link Frames#finishFrame}).
     */
    public static int begin(ByteBuf out, Opcode op, long seq, int handle, int flags, long queueSeq) {
        int start = Frames.beginRequest(out, op, seq, handle, flags);
        if ((flags & RequestDescriptor.FLAG_SEQUENCED) != 0) {
            out.writeLong(queueSeq);
        }
        return start;
    }

    /**
     * Reads the prefix of a sequenced mutation (reader index at the payload, left after the prefix).
     * {@code flags} are the request header's: a field added after the queue seq under a flag of its
     * own is read here when that flag is set, as {@link #begin} writes it.
     *
     * @throws MalformedPayloadException when truncated or the queue seq is not &gt;= 1
     */
    public SequencedPrefix wrap(ByteBuf in, int flags) {
        queueSeq = Wire.readLong(in);
        if (queueSeq <= 0) {
            throw new MalformedPayloadException("queue seq must be >= 1, got " + queueSeq);
        }
        return this;
    }

    public long queueSeq() {
        return queueSeq;
    }
}
