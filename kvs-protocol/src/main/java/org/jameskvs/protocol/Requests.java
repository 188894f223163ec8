package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/** Encoders of every request, one method per opcode; payloads as specified in {@link org.jameskvs.protocol}. */
public final class Requests {
    private Requests() {
    }

    public static void auth(ByteBuf out, long seq, String user, String password) {
        int start = Frames.beginRequest(out, Opcode.AUTH, seq, 0);
        Wire.writeString(out, user);
        Wire.writeString(out, password);
        Frames.finishFrame(out, start);
    }

    public static void open(ByteBuf out, long seq, String queue, OpenMode mode, long epoch,
                            long maxMessages, long maxBytes, String owner) {
        int start = Frames.beginRequest(out, Opcode.OPEN, seq, 0);
        Wire.writeString(out, queue);
        out.writeByte(mode.code());
        out.writeLong(epoch);
        out.writeLong(maxMessages);
        out.writeLong(maxBytes);
        Wire.writeString(out, owner);
        Frames.finishFrame(out, start);
    }

    public static void put(ByteBuf out, long seq, int handle, byte[] id, int priority, long notBefore,
                           byte[] state, byte[] body) {
        put(out, seq, handle, 0, id, priority, notBefore, state, body);
    }

    /** PUT with header flags, e.g. {@link RequestDescriptor#FLAG_REPLACE_EXISTING}. */
    public static void put(ByteBuf out, long seq, int handle, int flags, byte[] id, int priority, long notBefore,
                           byte[] state, byte[] body) {
        int start = Frames.beginRequest(out, Opcode.PUT, seq, handle);
        out.setShort(start + 4 + RequestDescriptor.FLAGS_OFFSET, flags);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        out.writeBytes(body);
        Frames.finishFrame(out, start);
    }

    public static void delete(ByteBuf out, long seq, int handle, byte[] id) {
        idOnly(out, Opcode.DELETE, seq, handle, id);
    }

    public static void get(ByteBuf out, long seq, int handle, byte[] id) {
        idOnly(out, Opcode.GET, seq, handle, id);
    }

    public static void replace(ByteBuf out, long seq, int handle, byte[] id, int priority, long notBefore, byte[] state) {
        int start = Frames.beginRequest(out, Opcode.REPLACE, seq, handle);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        Frames.finishFrame(out, start);
    }

    public static void read(ByteBuf out, long seq, int handle, long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        int start = Frames.beginRequest(out, Opcode.READ, seq, handle);
        out.writeLong(fromPosition);
        out.writeInt(maxCount);
        out.writeInt(maxBytes);
        out.writeLong(readyBefore);
        Frames.finishFrame(out, start);
    }

    /** PUT at a given position ({@link RequestDescriptor#FLAG_POSITIONED}), unsequenced; {@code flags} may add replacing. */
    public static void putAt(ByteBuf out, long seq, int handle, int flags, long position, byte[] id, int priority,
                             long notBefore, byte[] state, byte[] body) {
        int start = Frames.beginRequest(out, Opcode.PUT, seq, handle);
        out.setShort(start + 4 + RequestDescriptor.FLAGS_OFFSET, flags | RequestDescriptor.FLAG_POSITIONED);
        out.writeLong(position);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        out.writeBytes(body);
        Frames.finishFrame(out, start);
    }

    public static void rebase(ByteBuf out, long seq, int handle, long lastSeq, long digest) {
        rebase(out, seq, handle, lastSeq, digest, 0);
    }

    /** REBASE with the source's next position (0: none sent, the copy keeps its own). */
    public static void rebase(ByteBuf out, long seq, int handle, long lastSeq, long digest, long nextPosition) {
        int start = Frames.beginRequest(out, Opcode.REBASE, seq, handle);
        out.writeLong(lastSeq);
        out.writeLong(digest);
        if (nextPosition > 0) {
            out.writeLong(nextPosition);
        }
        Frames.finishFrame(out, start);
    }

    /**
     * The header of a mutation sent with its queue seq ({@link RequestDescriptor#FLAG_SEQUENCED}) and
     * that seq, the first payload field; the caller writes the rest and finishes the frame.
     */
    private static int beginSequenced(ByteBuf out, Opcode op, long seq, int handle, int flags, long queueSeq) {
        int start = Frames.beginRequest(out, op, seq, handle);
        out.setShort(start + 4 + RequestDescriptor.FLAGS_OFFSET, flags | RequestDescriptor.FLAG_SEQUENCED);
        out.writeLong(queueSeq);
        return start;
    }

    /** PUT with its queue seq; {@code flags} may add {@link RequestDescriptor#FLAG_REPLACE_EXISTING}. */
    public static void putSequenced(ByteBuf out, long seq, int handle, int flags, long queueSeq, byte[] id, int priority,
                                    long notBefore, byte[] state, byte[] body) {
        int start = beginSequenced(out, Opcode.PUT, seq, handle, flags, queueSeq);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        out.writeBytes(body);
        Frames.finishFrame(out, start);
    }

    public static void deleteSequenced(ByteBuf out, long seq, int handle, long queueSeq, byte[] id) {
        int start = beginSequenced(out, Opcode.DELETE, seq, handle, 0, queueSeq);
        Wire.writeId(out, id);
        Frames.finishFrame(out, start);
    }

    public static void replaceSequenced(ByteBuf out, long seq, int handle, long queueSeq, byte[] id, int priority,
                                        long notBefore, byte[] state) {
        int start = beginSequenced(out, Opcode.REPLACE, seq, handle, 0, queueSeq);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        Frames.finishFrame(out, start);
    }

    public static void clearSequenced(ByteBuf out, long seq, int handle, long queueSeq) {
        Frames.finishFrame(out, beginSequenced(out, Opcode.CLEAR, seq, handle, 0, queueSeq));
    }

    // ---- the commit point (flag 0x0008, opcode COMMIT): kept apart, so that it moves with the codec

    /**
     * The header of a sequenced mutation that also carries the writer's commit point
     * ({@link RequestDescriptor#FLAG_COMMITTED}): the queue seq, then the committed seq; the caller
     * writes the operation's payload and finishes the frame. {@code committed < 0}: no commit point
     * (the plain sequenced header).
     */
    public static int beginSequenced(ByteBuf out, Opcode op, long seq, int handle, int flags, long queueSeq,
                                     long committed) {
        if (committed < 0) {
            return beginSequenced(out, op, seq, handle, flags, queueSeq);
        }
        int start = beginSequenced(out, op, seq, handle, flags | RequestDescriptor.FLAG_COMMITTED, queueSeq);
        out.writeLong(committed);
        return start;
    }

    /** PUT with its queue seq and the commit point ({@code committed < 0}: none). */
    public static void putSequenced(ByteBuf out, long seq, int handle, int flags, long queueSeq, long committed,
                                    byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        int start = beginSequenced(out, Opcode.PUT, seq, handle, flags, queueSeq, committed);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        out.writeBytes(body);
        Frames.finishFrame(out, start);
    }

    /** DELETE with its queue seq and the commit point ({@code committed < 0}: none). */
    public static void deleteSequenced(ByteBuf out, long seq, int handle, long queueSeq, long committed, byte[] id) {
        int start = beginSequenced(out, Opcode.DELETE, seq, handle, 0, queueSeq, committed);
        Wire.writeId(out, id);
        Frames.finishFrame(out, start);
    }

    /** REPLACE with its queue seq and the commit point ({@code committed < 0}: none). */
    public static void replaceSequenced(ByteBuf out, long seq, int handle, long queueSeq, long committed, byte[] id,
                                        int priority, long notBefore, byte[] state) {
        int start = beginSequenced(out, Opcode.REPLACE, seq, handle, 0, queueSeq, committed);
        Wire.writeId(out, id);
        out.writeByte(priority);
        out.writeLong(notBefore);
        Wire.writeBlob(out, state);
        Frames.finishFrame(out, start);
    }

    /** CLEAR with its queue seq and the commit point ({@code committed < 0}: none). */
    public static void clearSequenced(ByteBuf out, long seq, int handle, long queueSeq, long committed) {
        Frames.finishFrame(out, beginSequenced(out, Opcode.CLEAR, seq, handle, 0, queueSeq, committed));
    }

    /** COMMIT (write handle): {@code i64} the writer's committed seq. */
    public static void commit(ByteBuf out, long seq, int handle, long committed) {
        int start = Frames.beginRequest(out, Opcode.COMMIT, seq, handle);
        out.writeLong(committed);
        Frames.finishFrame(out, start);
    }

    /** READ ignoring the commit point ({@link RequestDescriptor#FLAG_UNCOMMITTED}): one copy as it is. */
    public static void readUncommitted(ByteBuf out, long seq, int handle, long fromPosition, int maxCount, int maxBytes,
                                       long readyBefore) {
        int start = out.writerIndex();
        read(out, seq, handle, fromPosition, maxCount, maxBytes, readyBefore);
        out.setShort(start + 4 + RequestDescriptor.FLAGS_OFFSET, RequestDescriptor.FLAG_UNCOMMITTED);
    }

    /** STAT, LIST, CLEAR, DROP, PING, CLOSE: a header and no payload. */
    public static void empty(ByteBuf out, Opcode op, long seq, int handle) {
        int start = Frames.beginRequest(out, op, seq, handle);
        Frames.finishFrame(out, start);
    }

    private static void idOnly(ByteBuf out, Opcode op, long seq, int handle, byte[] id) {
        int start = Frames.beginRequest(out, op, seq, handle);
        Wire.writeId(out, id);
        Frames.finishFrame(out, start);
    }
}
