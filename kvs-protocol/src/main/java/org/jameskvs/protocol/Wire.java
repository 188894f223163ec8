package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;

/**
 * Readers and writers of the payload field types ({@code string}, {@code id}, {@code blob}).
 * Readers check bounds against the frame and throw {@link MalformedPayloadException}, never read
 * past the frame.
 */
public final class Wire {
    public static final int MAX_ID_LENGTH = 255;
    public static final int MAX_STRING_LENGTH = 65_535;

    private Wire() {
    }

    public static void writeString(ByteBuf out, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_LENGTH) {
            throw new IllegalArgumentException("string longer than " + MAX_STRING_LENGTH + " bytes");
        }
        out.writeShort(bytes.length);
        out.writeBytes(bytes);
    }

    public static String readString(ByteBuf in) {
        int len = readUnsignedShort(in);
        require(in, len, "string");
        String s = in.toString(in.readerIndex(), len, StandardCharsets.UTF_8);
        in.skipBytes(len);
        return s;
    }

    public static void writeId(ByteBuf out, byte[] id) {
        checkId(id);
        out.writeByte(id.length);
        out.writeBytes(id);
    }

    public static void checkId(byte[] id) {
        if (id.length == 0 || id.length > MAX_ID_LENGTH) {
            throw new IllegalArgumentException("message id must be 1.." + MAX_ID_LENGTH + " bytes, was " + id.length);
        }
    }

    public static byte[] readId(ByteBuf in) {
        int len = readUnsignedByte(in);
        if (len == 0) {
            throw new MalformedPayloadException("empty message id");
        }
        require(in, len, "id");
        byte[] id = new byte[len];
        in.readBytes(id);
        return id;
    }

    public static void writeBlob(ByteBuf out, byte[] blob) {
        out.writeInt(blob.length);
        out.writeBytes(blob);
    }

    public static void writeBlob(ByteBuf out, ByteBuf blob) {
        out.writeInt(blob.readableBytes());
        out.writeBytes(blob, blob.readerIndex(), blob.readableBytes());
    }

    public static byte[] readBlob(ByteBuf in) {
        int len = readBlobLength(in);
        byte[] blob = new byte[len];
        in.readBytes(blob);
        return blob;
    }

    /** Reads a blob's length and checks the bytes are there; the reader index is left at the first blob byte. */
    public static int readBlobLength(ByteBuf in) {
        int len = readInt(in);
        if (len < 0) {
            throw new MalformedPayloadException("negative blob length");
        }
        require(in, len, "blob");
        return len;
    }

    public static int readUnsignedByte(ByteBuf in) {
        require(in, 1, "u8");
        return in.readUnsignedByte();
    }

    public static int readUnsignedShort(ByteBuf in) {
        require(in, 2, "u16");
        return in.readUnsignedShort();
    }

    public static int readInt(ByteBuf in) {
        require(in, 4, "i32");
        return in.readInt();
    }

    public static long readLong(ByteBuf in) {
        require(in, 8, "i64");
        return in.readLong();
    }

    /** Reads the remaining bytes of the frame. */
    public static byte[] readTail(ByteBuf in) {
        byte[] tail = new byte[in.readableBytes()];
        in.readBytes(tail);
        return tail;
    }

    private static void require(ByteBuf in, int n, String what) {
        if (in.readableBytes() < n) {
            throw new MalformedPayloadException("payload truncated in " + what
                    + " (need " + n + " bytes, have " + in.readableBytes() + ")");
        }
    }
}
