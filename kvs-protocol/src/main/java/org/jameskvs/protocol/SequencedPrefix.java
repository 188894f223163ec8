package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The fields a mutation's payload starts with when its header has {@link RequestDescriptor#FLAG_SEQUENCED}
 * (PUT, DELETE, REPLACE, CLEAR): {@code i64 queue seq}, then, with {@link RequestDescriptor#FLAG_COMMITTED},
 * {@code i64 committed seq} (the writer's commit point). The one place that writes and reads them.
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
    /** -1 when the request carries no commit point. */
    private long committedSeq = -1;

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
     * The same, with the writer's commit point: {@code committed >= 0} sets
     * {@link RequestDescriptor#FLAG_COMMITTED} and writes it after the queue seq; {@code committed < 0}
     * writes the plain prefix.
     */
    public static int begin(ByteBuf out, Opcode op, long seq, int handle, int flags, long queueSeq, long committed) {
        if (committed < 0) {
            return begin(out, op, seq, handle, flags, queueSeq);
        }
        int start = begin(out, op, seq, handle, flags | RequestDescriptor.FLAG_COMMITTED, queueSeq);
        out.writeLong(committed);
        return start;
    }

    /**
     * Reads the prefix of a sequenced mutation (reader index at the payload, left after the prefix).
     * {@code flags} are the request header's: a field added after the queue seq under a flag of its
     * own is read here when that flag is set, as {@link #begin} writes it.
     *
     * @throws MalformedPayloadException when truncated, the queue seq is not &gt;= 1 or the committed seq
     *                                   is negative
     */
    public SequencedPrefix wrap(ByteBuf in, int flags) {
        queueSeq = Wire.readLong(in);
        if (queueSeq <= 0) {
            throw new MalformedPayloadException("queue seq must be >= 1, got " + queueSeq);
        }
        committedSeq = -1;
        if ((flags & RequestDescriptor.FLAG_COMMITTED) != 0) {
            committedSeq = Wire.readLong(in);
            if (committedSeq < 0) {
                throw new MalformedPayloadException("committed seq must be >= 0, got " + committedSeq);
            }
        }
        return this;
    }

    public long queueSeq() {
        return queueSeq;
    }

    /** The writer's commit point the request carries, or -1 when it carries none. */
    public long committedSeq() {
        return committedSeq;
    }
}
