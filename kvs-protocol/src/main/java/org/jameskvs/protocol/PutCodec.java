package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * PUT (0x03). Request payload, after the {@link SequencedPrefix} when flagged:
 * [{@code i64 position} when {@link RequestDescriptor#FLAG_POSITIONED}], {@code id}, {@code u8 priority},
 * {@code i64 notBefore}, {@code blob state}, {@code tail body}. OK answer: {@code i64 position}.
 * <p>The instance is the request reader, a flyweight the server reuses per request ({@link #wrap}):
 * state and body are views of the frame (no copy), valid while the frame is. Not thread-safe.
 */
public final class PutCodec extends MessageFields {
    /** OK answer: offset of the position in the payload. */
    public static final int OK_POSITION_OFFSET = 0;
    public static final int OK_LENGTH = 8;

    private int flags;
    private long position;
    private ByteBuf body;

    /**
     * Writes a whole PUT request. {@code flags}: {@link RequestDescriptor#FLAG_REPLACE_EXISTING},
     * {@link RequestDescriptor#FLAG_SEQUENCED} (then {@code queueSeq} is sent),
     * {@link RequestDescriptor#FLAG_POSITIONED} (then {@code position} is sent); each field only
     * with its flag.
     */
    public static void writeRequest(ByteBuf out, long seq, int handle, int flags, long queueSeq, long position,
                                    byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        int start = SequencedPrefix.begin(out, Opcode.PUT, seq, handle, flags, queueSeq);
        writePayload(out, flags, position, id, priority, notBefore, state, body);
        Frames.finishFrame(out, start);
    }

    /**
     * Writes the payload after the header and any {@link SequencedPrefix}: for a caller that starts
     * the frame itself (a prefix with more fields), then finishes it ({@link Frames#finishFrame}).
     */
    public static void writePayload(ByteBuf out, int flags, long position, byte[] id, int priority, long notBefore,
                                    byte[] state, byte[] body) {
        if ((flags & RequestDescriptor.FLAG_POSITIONED) != 0) {
            out.writeLong(position);
        }
        writeFields(out, id, priority, notBefore, state);
        out.writeBytes(body);
    }

    /**
     * Reads a PUT payload (reader index after any {@link SequencedPrefix}). On return {@code in}'s
     * readable bytes are the body, and {@link #body()} is {@code in} itself.
     *
     * @throws MalformedPayloadException when truncated or the position is not &gt;= 1
     */
    public PutCodec wrap(ByteBuf in, int flags) {
        this.flags = flags;
        position = 0;
        if ((flags & RequestDescriptor.FLAG_POSITIONED) != 0) {
            position = Wire.readLong(in);
            if (position <= 0) {
                throw new MalformedPayloadException("position must be >= 1, got " + position);
            }
        }
        readFields(in);
        body = in;
        return this;
    }

    /** 0 when the request does not give a position (the server numbers the message). */
    public long position() {
        return position;
    }

    public boolean replaceExisting() {
        return (flags & RequestDescriptor.FLAG_REPLACE_EXISTING) != 0;
    }

    public ByteBuf body() {
        return body;
    }

    /** Writes a whole OK answer. */
    public static void writeOk(ByteBuf out, long seq, long txn, long position) {
        int start = Frames.beginResponse(out, Opcode.PUT.code(), Status.OK, seq, txn);
        out.writeLong(position);
        Frames.finishFrame(out, start);
    }

    /** Reads an OK answer's payload: the position the message took. */
    public static long readOk(ByteBuf payload) {
        return Wire.readLong(payload);
    }
}
