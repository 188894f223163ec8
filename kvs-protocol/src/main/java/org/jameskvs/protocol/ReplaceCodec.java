package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * REPLACE (0x05). Request payload, after the {@link SequencedPrefix} when flagged: {@code id},
 * {@code u8 priority}, {@code i64 notBefore}, {@code blob state}. OK answer: empty.
 * <p>The instance is the request reader, a flyweight reused per request; the state is a view of the
 * frame. Not thread-safe.
 */
public final class ReplaceCodec extends MessageFields {

    /** {@code flags}: 0 or {@link RequestDescriptor#FLAG_SEQUENCED} (then {@code queueSeq} is sent). */
    public static void writeRequest(ByteBuf out, long seq, int handle, int flags, long queueSeq, byte[] id,
                                    int priority, long notBefore, byte[] state) {
        int start = SequencedPrefix.begin(out, Opcode.REPLACE, seq, handle, flags, queueSeq);
        writePayload(out, id, priority, notBefore, state);
        Frames.finishFrame(out, start);
    }

    /** The payload after the header and any {@link SequencedPrefix} (see {@link PutCodec#writePayload}). */
    public static void writePayload(ByteBuf out, byte[] id, int priority, long notBefore, byte[] state) {
        writeFields(out, id, priority, notBefore, state);
    }

    /** Reads the payload (reader index after any {@link SequencedPrefix}). */
    public ReplaceCodec wrap(ByteBuf in) {
        readFields(in);
        return this;
    }

    public static void writeOk(ByteBuf out, long seq, long txn) {
        Frames.writeEmptyOk(out, Opcode.REPLACE.code(), seq, txn);
    }
}
