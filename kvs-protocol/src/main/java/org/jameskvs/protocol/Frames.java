package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Header access for decoded frames (the {@link ByteBuf} that {@link FrameDecoder} emits, which starts
 * at the version byte). Flyweight style: static getters over the buffer, no objects per frame.
 */
public final class Frames {
    private Frames() {
    }

    // ---- requests

    public static byte requestOpcode(ByteBuf frame) {
        return frame.getByte(frame.readerIndex() + RequestDescriptor.OPCODE_OFFSET);
    }

    public static int requestFlags(ByteBuf frame) {
        return frame.getUnsignedShort(frame.readerIndex() + RequestDescriptor.FLAGS_OFFSET);
    }

    public static long requestSequence(ByteBuf frame) {
        return frame.getLong(frame.readerIndex() + RequestDescriptor.SEQUENCE_OFFSET);
    }

    public static int requestHandle(ByteBuf frame) {
        return frame.getInt(frame.readerIndex() + RequestDescriptor.HANDLE_OFFSET);
    }

    /** Moves the reader index to the request payload. */
    public static ByteBuf skipRequestHeader(ByteBuf frame) {
        return frame.skipBytes(RequestDescriptor.HEADER_SIZE);
    }

    /**
     * Starts a request frame: writes the header with a placeholder length. Write the payload, then
     * call {@link #finishFrame(ByteBuf, int)} with the returned start index.
     */
    public static int beginRequest(ByteBuf out, Opcode op, long sequence, int handle) {
        return beginRequest(out, op, sequence, handle, 0);
    }

    /** {@link #beginRequest(ByteBuf, Opcode, long, int)} with header flags ({@link RequestDescriptor}'s {@code FLAG_*}). */
    public static int beginRequest(ByteBuf out, Opcode op, long sequence, int handle, int flags) {
        int start = out.writerIndex();
        // length placeholder (4), version (1), opcode (1), flags (2) as one long (the client's per-request path)
        out.writeLong((long) (ProtocolVersion.CURRENT & 0xFF) << 24 | (op.code() & 0xFF) << 16 | flags & 0xFFFF);
        out.writeLong(sequence);
        out.writeInt(handle);
        return start;
    }

    // ---- responses

    public static byte responseOpcode(ByteBuf frame) {
        return frame.getByte(frame.readerIndex() + ResponseDescriptor.OPCODE_OFFSET);
    }

    public static Status responseStatus(ByteBuf frame) {
        return Status.fromCode(frame.getUnsignedShort(frame.readerIndex() + ResponseDescriptor.STATUS_OFFSET));
    }

    public static long responseSequence(ByteBuf frame) {
        return frame.getLong(frame.readerIndex() + ResponseDescriptor.SEQUENCE_OFFSET);
    }

    public static long responseTxn(ByteBuf frame) {
        return frame.getLong(frame.readerIndex() + ResponseDescriptor.TXN_OFFSET);
    }

    public static ByteBuf skipResponseHeader(ByteBuf frame) {
        return frame.skipBytes(ResponseDescriptor.HEADER_SIZE);
    }

    /** Starts a response frame; finish it with {@link #finishFrame(ByteBuf, int)}. */
    public static int beginResponse(ByteBuf out, byte opcode, Status status, long sequence, long txn) {
        int start = out.writerIndex();
        // length placeholder (4), version (1), opcode (1), status (2) as one long: one bounds check
        // instead of four on the server's per-response path
        out.writeLong((long) (ProtocolVersion.CURRENT & 0xFF) << 24 | (opcode & 0xFF) << 16 | status.code() & 0xFFFF);
        out.writeLong(sequence);
        out.writeLong(txn);
        return start;
    }

    /** Writes a whole error response: header plus the reason string ({@link ErrorResponse#write}). */
    public static void writeError(ByteBuf out, byte opcode, Status status, long sequence, long txn, String reason) {
        ErrorResponse.write(out, opcode, status, sequence, txn, reason);
    }

    /** Writes an OK response without payload (DELETE, REPLACE, CLEAR, DROP, CLOSE, REBASE, AUTH). */
    public static void writeEmptyOk(ByteBuf out, byte opcode, long sequence, long txn) {
        finishFrame(out, beginResponse(out, opcode, Status.OK, sequence, txn));
    }

    /** Patches the length field of the frame that begins at {@code start}. */
    public static void finishFrame(ByteBuf out, int start) {
        out.setInt(start, out.writerIndex() - start - 4);
    }
}
