package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/** DELETE (0x04). Request payload, after the {@link SequencedPrefix} when flagged: {@code id}. OK answer: empty. */
public final class DeleteCodec {
    private DeleteCodec() {
    }

    /** {@code flags}: 0 or {@link RequestDescriptor#FLAG_SEQUENCED} (then {@code queueSeq} is sent). */
    public static void writeRequest(ByteBuf out, long seq, int handle, int flags, long queueSeq, byte[] id) {
        int start = SequencedPrefix.begin(out, Opcode.DELETE, seq, handle, flags, queueSeq);
        writePayload(out, id);
        Frames.finishFrame(out, start);
    }

    /** The payload after the header and any {@link SequencedPrefix} (see {@link PutCodec#writePayload}). */
    public static void writePayload(ByteBuf out, byte[] id) {
        Wire.writeId(out, id);
    }

    /** Reads the request's id (reader index after any {@link SequencedPrefix}). */
    public static byte[] readRequest(ByteBuf in) {
        return Wire.readId(in);
    }

    public static void writeOk(ByteBuf out, long seq, long txn) {
        Frames.writeEmptyOk(out, Opcode.DELETE.code(), seq, txn);
    }
}
