package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The client's request encoders, one method per opcode and variant; each delegates to its
 * operation's codec ({@link PutCodec}, {@link DeleteCodec}, ...), which holds the layout.
 */
public final class Requests {
    private Requests() {
    }

    public static void auth(ByteBuf out, long seq, String user, String password) {
        AuthCodec.writeRequest(out, seq, user, password);
    }

    public static void open(ByteBuf out, long seq, String queue, OpenMode mode, long epoch,
                            long maxMessages, long maxBytes, String owner) {
        OpenCodec.writeRequest(out, seq, queue, mode, epoch, maxMessages, maxBytes, owner);
    }

    /** OPEN that only the store {@code expectedStore} may answer (0: any), see {@link OpenCodec}. */
    public static void open(ByteBuf out, long seq, String queue, OpenMode mode, long epoch,
                            long maxMessages, long maxBytes, String owner, long expectedStore) {
        OpenCodec.writeRequest(out, seq, queue, mode, epoch, maxMessages, maxBytes, owner, expectedStore);
    }

    public static void put(ByteBuf out, long seq, int handle, byte[] id, int priority, long notBefore,
                           byte[] state, byte[] body) {
        put(out, seq, handle, 0, id, priority, notBefore, state, body);
    }

    /** PUT with header flags, e.g. {@link RequestDescriptor#FLAG_REPLACE_EXISTING}. */
    public static void put(ByteBuf out, long seq, int handle, int flags, byte[] id, int priority, long notBefore,
                           byte[] state, byte[] body) {
        PutCodec.writeRequest(out, seq, handle, flags, 0, 0, id, priority, notBefore, state, body);
    }

    public static void delete(ByteBuf out, long seq, int handle, byte[] id) {
        DeleteCodec.writeRequest(out, seq, handle, 0, 0, id);
    }

    public static void get(ByteBuf out, long seq, int handle, byte[] id) {
        GetCodec.writeRequest(out, seq, handle, id);
    }

    public static void replace(ByteBuf out, long seq, int handle, byte[] id, int priority, long notBefore, byte[] state) {
        ReplaceCodec.writeRequest(out, seq, handle, 0, 0, id, priority, notBefore, state);
    }

    public static void read(ByteBuf out, long seq, int handle, long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        ReadCodec.writeRequest(out, seq, handle, fromPosition, maxCount, maxBytes, readyBefore);
    }

    /** PUT at a given position ({@link RequestDescriptor#FLAG_POSITIONED}), unsequenced; {@code flags} may add replacing. */
    public static void putAt(ByteBuf out, long seq, int handle, int flags, long position, byte[] id, int priority,
                             long notBefore, byte[] state, byte[] body) {
        PutCodec.writeRequest(out, seq, handle, flags | RequestDescriptor.FLAG_POSITIONED, 0, position, id, priority,
                notBefore, state, body);
    }

    public static void rebase(ByteBuf out, long seq, int handle, long lastSeq, long digest) {
        rebase(out, seq, handle, lastSeq, digest, 0);
    }

    /** REBASE with the source's next position (0: none sent, the copy keeps its own). */
    public static void rebase(ByteBuf out, long seq, int handle, long lastSeq, long digest, long nextPosition) {
        RebaseCodec.writeRequest(out, seq, handle, lastSeq, digest, nextPosition);
    }

    /** Conditional REBASE ({@link RequestDescriptor#FLAG_IF_AT}). */
    public static void rebaseIfAt(ByteBuf out, long seq, int handle, long lastSeq, long expectedDigest, long digest) {
        RebaseCodec.writeIfAt(out, seq, handle, lastSeq, expectedDigest, digest);
    }

    /** PUT with its queue seq; {@code flags} may add {@link RequestDescriptor#FLAG_REPLACE_EXISTING}. */
    public static void putSequenced(ByteBuf out, long seq, int handle, int flags, long queueSeq, byte[] id, int priority,
                                    long notBefore, byte[] state, byte[] body) {
        PutCodec.writeRequest(out, seq, handle, flags | RequestDescriptor.FLAG_SEQUENCED, queueSeq, 0, id, priority,
                notBefore, state, body);
    }

    public static void deleteSequenced(ByteBuf out, long seq, int handle, long queueSeq, byte[] id) {
        DeleteCodec.writeRequest(out, seq, handle, RequestDescriptor.FLAG_SEQUENCED, queueSeq, id);
    }

    public static void replaceSequenced(ByteBuf out, long seq, int handle, long queueSeq, byte[] id, int priority,
                                        long notBefore, byte[] state) {
        ReplaceCodec.writeRequest(out, seq, handle, RequestDescriptor.FLAG_SEQUENCED, queueSeq, id, priority, notBefore,
                state);
    }

    public static void clearSequenced(ByteBuf out, long seq, int handle, long queueSeq) {
        Frames.finishFrame(out, SequencedPrefix.begin(out, Opcode.CLEAR, seq, handle, RequestDescriptor.FLAG_SEQUENCED,
                queueSeq));
    }

    // ---- with the writer's commit point (flag 0x0008, opcode COMMIT; committed < 0: none, the plain form)

    /** PUT with its queue seq and the commit point. */
    public static void putSequenced(ByteBuf out, long seq, int handle, int flags, long queueSeq, long committed,
                                    byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        int sequenced = flags | RequestDescriptor.FLAG_SEQUENCED;
        int start = SequencedPrefix.begin(out, Opcode.PUT, seq, handle, sequenced, queueSeq, committed);
        PutCodec.writePayload(out, sequenced, 0, id, priority, notBefore, state, body);
        Frames.finishFrame(out, start);
    }

    /** DELETE with its queue seq and the commit point. */
    public static void deleteSequenced(ByteBuf out, long seq, int handle, long queueSeq, long committed, byte[] id) {
        int start = SequencedPrefix.begin(out, Opcode.DELETE, seq, handle, RequestDescriptor.FLAG_SEQUENCED, queueSeq,
                committed);
        DeleteCodec.writePayload(out, id);
        Frames.finishFrame(out, start);
    }

    /** REPLACE with its queue seq and the commit point. */
    public static void replaceSequenced(ByteBuf out, long seq, int handle, long queueSeq, long committed, byte[] id,
                                        int priority, long notBefore, byte[] state) {
        int start = SequencedPrefix.begin(out, Opcode.REPLACE, seq, handle, RequestDescriptor.FLAG_SEQUENCED, queueSeq,
                committed);
        ReplaceCodec.writePayload(out, id, priority, notBefore, state);
        Frames.finishFrame(out, start);
    }

    /** CLEAR with its queue seq and the commit point. */
    public static void clearSequenced(ByteBuf out, long seq, int handle, long queueSeq, long committed) {
        Frames.finishFrame(out, SequencedPrefix.begin(out, Opcode.CLEAR, seq, handle, RequestDescriptor.FLAG_SEQUENCED,
                queueSeq, committed));
    }

    /** COMMIT (write handle): the writer's committed seq. */
    public static void commit(ByteBuf out, long seq, int handle, long committed) {
        CommitCodec.writeRequest(out, seq, handle, committed);
    }

    /** READ ignoring the commit point ({@link RequestDescriptor#FLAG_UNCOMMITTED}): one copy as it is. */
    public static void readUncommitted(ByteBuf out, long seq, int handle, long fromPosition, int maxCount, int maxBytes,
                                       long readyBefore) {
        ReadCodec.writeRequest(out, seq, handle, RequestDescriptor.FLAG_UNCOMMITTED, fromPosition, maxCount, maxBytes,
                readyBefore);
    }

    /** STAT, LIST, CLEAR, DROP, PING, CLOSE: a header and no payload. */
    public static void empty(ByteBuf out, Opcode op, long seq, int handle) {
        int start = Frames.beginRequest(out, op, seq, handle);
        Frames.finishFrame(out, start);
    }
}
