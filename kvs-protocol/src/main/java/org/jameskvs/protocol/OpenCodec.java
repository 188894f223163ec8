package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * OPEN (0x02). Request payload: {@code string queue, u8 mode, i64 epoch, i64 maxMessages,
 * i64 maxBytes, string owner[, i64 expected store]}. OK answer: {@code i32 handle, i64 epoch,
 * i64 size, u8 queue flags, i64 last seq, i64 digest, i64 store}.
 * <p>The expected store is optional (absent or 0: any store): a client that opened the queue before
 * names the store that answered then, and a server whose store is another one (it lost its disk)
 * refuses with {@link Status#STORE_CHANGED} before it creates or fences anything. So a writer coming
 * back to a node never fences, on an emptied store, the queue a newer owner rebuilt there. Servers
 * before this field ignore it (they read up to the owner): the check needs upgraded servers. A field
 * cut short (1 to 7 bytes) is a malformed payload.
 * <p>The instance is the request reader; {@link Answer} reads the OK answer.
 */
public final class OpenCodec {
    private String queue;
    private OpenMode mode;
    private long epoch;
    private long maxMessages;
    private long maxBytes;
    private String owner;
    private long expectedStore;

    public static void writeRequest(ByteBuf out, long seq, String queue, OpenMode mode, long epoch, long maxMessages,
                                    long maxBytes, String owner) {
        writeRequest(out, seq, queue, mode, epoch, maxMessages, maxBytes, owner, 0);
    }

    /** With {@code expectedStore} 0 the field is left out (any store), as before it existed. */
    public static void writeRequest(ByteBuf out, long seq, String queue, OpenMode mode, long epoch, long maxMessages,
                                    long maxBytes, String owner, long expectedStore) {
        int start = Frames.beginRequest(out, Opcode.OPEN, seq, 0);
        Wire.writeString(out, queue);
        out.writeByte(mode.code());
        out.writeLong(epoch);
        out.writeLong(maxMessages);
        out.writeLong(maxBytes);
        Wire.writeString(out, owner);
        if (expectedStore != 0) {
            out.writeLong(expectedStore);
        }
        Frames.finishFrame(out, start);
    }

    /** @throws MalformedPayloadException when truncated, the mode unknown, the name empty or a number negative */
    public OpenCodec wrap(ByteBuf in) {
        queue = Wire.readString(in);
        mode = OpenMode.fromCode(Wire.readUnsignedByte(in));
        epoch = Wire.readLong(in);
        maxMessages = Wire.readLong(in);
        maxBytes = Wire.readLong(in);
        owner = Wire.readString(in);
        expectedStore = in.isReadable() ? Wire.readLong(in) : 0;
        if (mode == null) {
            throw new MalformedPayloadException("open mode must be 0 (read) or 1 (write)");
        }
        if (queue.isEmpty() || maxMessages < 0 || maxBytes < 0 || epoch < 0) {
            throw new MalformedPayloadException("queue name must be non-empty; limits and epoch non-negative");
        }
        return this;
    }

    public String queue() {
        return queue;
    }

    public OpenMode mode() {
        return mode;
    }

    public long epoch() {
        return epoch;
    }

    public long maxMessages() {
        return maxMessages;
    }

    public long maxBytes() {
        return maxBytes;
    }

    public String owner() {
        return owner;
    }

    /** The store the client expects to answer, 0 for any. */
    public long expectedStore() {
        return expectedStore;
    }

    public static void writeOk(ByteBuf out, long seq, long txn, int handle, long epoch, long size, int queueFlags,
                               long lastSeq, long digest, long store) {
        int start = Frames.beginResponse(out, Opcode.OPEN.code(), Status.OK, seq, txn);
        out.writeInt(handle);
        out.writeLong(epoch);
        out.writeLong(size);
        CopyCheckAnswer.writeCheck(out, queueFlags, lastSeq, digest, store);
        Frames.finishFrame(out, start);
    }

    /** Reader of the OK answer. */
    public static final class Answer extends CopyCheckAnswer {
        private int handle;
        private long epoch;
        private long size;

        /** The fields, then the copy-check tail ({@link CopyCheckAnswer}). */
        public Answer wrap(ByteBuf p) {
            handle = Wire.readInt(p);
            epoch = Wire.readLong(p);
            size = Wire.readLong(p);
            readCheck(p);
            return this;
        }

        public int handle() {
            return handle;
        }

        public long epoch() {
            return epoch;
        }

        public long size() {
            return size;
        }
    }
}
