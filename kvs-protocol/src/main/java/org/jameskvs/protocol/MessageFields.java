package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The fields PUT and REPLACE requests share: {@code id, u8 priority, i64 notBefore, blob state}
 * (a PUT adds its body after them). The bytes after the id are also what a mutation's content
 * digest covers on the server. A flyweight base: the state is a view of the frame, valid while the
 * frame is. Not thread-safe.
 */
public abstract class MessageFields {
    private byte[] id;
    private int priority;
    private long notBefore;
    private ByteBuf state;

    static void writeFields(ByteBuf out, byte[] id, int priority, long notBefore, byte[] state) {
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
    }

    /** @throws MalformedPayloadException when truncated */
    final void readFields(ByteBuf in) {
        id = Wire.readId(in);
        priority = Wire.readUnsignedByte(in);
        notBefore = Wire.readLong(in);
        state = in.readSlice(Wire.readBlobLength(in));
    }

    public final byte[] id() {
        return id;
    }

    public final int priority() {
        return priority;
    }

    public final long notBefore() {
        return notBefore;
    }

    public final ByteBuf state() {
        return state;
    }
}
