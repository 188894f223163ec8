package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/** GET (0x06). Request payload: {@code id}. OK answer: one {@link MessageRecord}. */
public final class GetCodec {
    private GetCodec() {
    }

    public static void writeRequest(ByteBuf out, long seq, int handle, byte[] id) {
        int start = Frames.beginRequest(out, Opcode.GET, seq, handle);
        Wire.writeId(out, id);
        Frames.finishFrame(out, start);
    }

    public static byte[] readRequest(ByteBuf in) {
        return Wire.readId(in);
    }

    /**
     * Starts the OK answer; the caller writes the message record (the server copies it from its
     * journal) and then calls {@link Frames#finishFrame} with the returned start.
     */
    public static int beginOk(ByteBuf out, long seq, long txn) {
        return Frames.beginResponse(out, Opcode.GET.code(), Status.OK, seq, txn);
    }

    public static StoredMessage readOk(ByteBuf payload) {
        return MessageRecord.read(payload);
    }
}
