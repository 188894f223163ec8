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
        int start = out.writerIndex();
        // length placeholder (4), version (1), opcode (1), flags 0 (2) as one long (the client's per-request path)
        out.writeLong((long) (ProtocolVersion.CURRENT & 0xFF) << 24 | (op.code() & 0xFF) << 16);
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

    /** Writes a whole error response: header plus the reason string. */
    public static void writeError(ByteBuf out, byte opcode, Status status, long sequence, long txn, String reason) {
        int start = beginResponse(out, opcode, status, sequence, txn);
        String r = reason == null ? status.description() : reason;
        if (r.length() > 1000) {
            r = r.substring(0, 1000);
        }
        Wire.writeString(out, r);
        finishFrame(out, start);
    }

    /** Patches the length field of the frame that begins at {@code start}. */
    public static void finishFrame(ByteBuf out, int start) {
        out.setInt(start, out.writerIndex() - start - 4);
    }
}
