package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Writer and reader of the {@code message record} ({@link MessageRecordDescriptor}). The server's
 * journal writes its PUT records with {@link #writeHead} and {@link #writeBodyLength}, so they are
 * this layout byte for byte; GET and READ then copy them into the answer.
 */
public final class MessageRecord {
    private MessageRecord() {
    }

    /**
     * Writes the fields up to and including the state length: position, id, priority, notBefore,
     * {@code i32 stateLength}. The state bytes, {@link #writeBodyLength} and the body follow.
     */
    public static void writeHead(ByteBuf out, long position, byte[] id, int priority, long notBefore, int stateLength) {
        Wire.checkId(id);
        out.writeLong(position).writeByte(id.length).writeBytes(id).writeByte(priority).writeLong(notBefore)
                .writeInt(stateLength);
    }

    public static void writeBodyLength(ByteBuf out, int bodyLength) {
        out.writeInt(bodyLength);
    }

    /** Writes a whole record; state and body are copied from the given buffers (readable bytes, indexes unchanged). */
    public static void write(ByteBuf out, long position, byte[] id, int priority, long notBefore, ByteBuf state,
                             ByteBuf body) {
        writeHead(out, position, id, priority, notBefore, state.readableBytes());
        out.writeBytes(state, state.readerIndex(), state.readableBytes());
        writeBodyLength(out, body.readableBytes());
        out.writeBytes(body, body.readerIndex(), body.readableBytes());
    }

    /** Reads one record (the client's side: the bytes go on to the application as arrays). */
    public static StoredMessage read(ByteBuf in) {
        long position = Wire.readLong(in);
        byte[] id = Wire.readId(in);
        int priority = Wire.readUnsignedByte(in);
        long notBefore = Wire.readLong(in);
        byte[] state = Wire.readBlob(in);
        byte[] body = Wire.readBlob(in);
        return new StoredMessage(position, id, priority, notBefore, state, body);
    }
}
