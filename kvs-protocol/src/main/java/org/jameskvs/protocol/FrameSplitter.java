package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;

/**
 * The framing of the byte stream (either direction: request and response frames share the length
 * prefix and the version byte), with what to do with each frame left to a subclass:
 * {@link FrameDecoder} emits each frame as a buffer of its own; a handler that consumes frames at
 * once can instead take them <i>in place</i>, in the receive buffer, with no slice, reference count
 * or pipeline hop per frame.
 *
 * <p>A frame over the limit is skipped (across reads, keeping framing) and reported to
 * {@link #oversized}; a length below the minimum header or an unknown version throws
 * {@link FramingLostException} (for a version, naming both: see {@link FrameKind#versionMismatch}).
 *
 * <p>Each read is split where it lies. Only a frame that straddles two reads is copied, into a
 * buffer of its own that the next read completes; the rest of a read is never appended to the
 * previous one (which is what {@link ByteToMessageDecoder}'s default cumulation would do: a copy of
 * almost every byte when frames are small and reads large).
 */
public abstract class FrameSplitter extends ByteToMessageDecoder {
    private final int maxFrameLength;
    private final FrameKind kind;
    private long bytesToSkip;
    /** True while a frame is being handled: a callback that re-enters the decoder (see decode) is ignored. */
    private boolean inFrame;
    /** The frame that straddles two reads, from its length field on, as far as received; null when none. */
    private ByteBuf partial;

    /**
     * @param maxFrameLength largest accepted frame, counting the bytes after the length field
     * @param kind           the frames this side reads (requests on the server, responses on the client)
     */
    protected FrameSplitter(int maxFrameLength, FrameKind kind) {
        this.maxFrameLength = maxFrameLength;
        this.kind = kind;
    }

    /**
     * One whole frame. {@code in} is the receive buffer narrowed to the frame: its reader index is
     * at the version byte (the first byte after the length field) and its writer index at the
     * frame's end. The frame's bytes are only valid during the call: use {@code retainedSlice()} to
     * keep them. Indexes need not be restored; the splitter moves on to the next frame either way.
     */
    protected abstract void frame(ChannelHandlerContext ctx, ByteBuf in, List<Object> out);

    /** A frame over the limit, whose bytes are being skipped; its header fields as far as read. */
    protected abstract void oversized(ChannelHandlerContext ctx, byte opcode, long sequence, long length,
                                      List<Object> out);

    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (inFrame) {
            // Re-entered from inside frame(): e.g. the handler closed the channel and the close fired
            // channelInactive synchronously (EmbeddedChannel does), whose last decode pass lands here
            // while the buffer's indexes are narrowed to the current frame. The outer pass goes on.
            return;
        }
        boolean retained = false;
        try {
            if (partial != null) {
                if (!fillPartial(in)) {
                    return;
                }
                // Keeps the read buffer alive should the frame's handler make the decoder drop it.
                in.retain();
                retained = true;
                ByteBuf whole = partial;
                partial = null;
                try {
                    if (!split(ctx, whole, in, out)) {
                        return;
                    }
                } finally {
                    whole.release();
                }
            }
            if (!retained) {
                // Once per read, not per frame: keeps the buffer alive should a frame's handler
                // make the decoder drop it (channel closed), so the indexes can still be restored.
                in.retain();
                retained = true;
            }
            if (split(ctx, in, in, out) && in.isReadable()) {
                stash(ctx, in);
            }
        } catch (FramingLostException e) {
            // Nothing after lost framing can be read as frames.
            in.skipBytes(in.readableBytes());
            dropPartial();
            throw e;
        } finally {
            if (retained) {
                in.release();
            }
        }
    }

    /**
     * Handles every whole frame in {@code buf}, in place, leaving its reader index at the first
     * byte of an incomplete one.
     *
     * @param read the decoder's buffer of this read (itself, or the read that completed {@code buf})
     * @return false when the connection was let go of meanwhile (stop reading)
     */
    private boolean split(ChannelHandlerContext ctx, ByteBuf buf, ByteBuf read, List<Object> out) {
        while (true) {
            if (bytesToSkip > 0) {
                int skip = (int) Math.min(bytesToSkip, buf.readableBytes());
                buf.skipBytes(skip);
                bytesToSkip -= skip;
                if (bytesToSkip > 0) {
                    return true;
                }
            }
            long wanted = wholeFrameBytes(buf);
            if (wanted < 0 || buf.readableBytes() < wanted) {
                return true;
            }
            int start = buf.readerIndex();
            long length = buf.getUnsignedInt(start);
            if (length > maxFrameLength) {
                byte opcode = buf.getByte(start + 4 + RequestDescriptor.OPCODE_OFFSET);
                long sequence = buf.getLong(start + 4 + RequestDescriptor.SEQUENCE_OFFSET);
                buf.skipBytes(4);
                bytesToSkip = length;
                oversized(ctx, opcode, sequence, length, out);
                continue;
            }
            int frameStart = start + 4;
            int frameEnd = frameStart + (int) length;
            int end = buf.writerIndex();
            buf.setIndex(frameStart, frameEnd);
            inFrame = true;
            try {
                frame(ctx, buf, out);
            } finally {
                inFrame = false;
                buf.setIndex(frameEnd, end);
            }
            if (internalBuffer() != read) {
                // The decoder let go of this buffer meanwhile (the connection closed): stop here.
                buf.setIndex(end, end);
                read.setIndex(read.writerIndex(), read.writerIndex());
                return false;
            }
        }
    }

    /**
     * How many bytes from the reader index the frame starting there needs before it can be handled
     * (for a frame over the limit: its header, enough to answer it), or -1 while even its length
     * field is incomplete. Throws {@link FramingLostException} for an impossible length or version.
     */
    private long wholeFrameBytes(ByteBuf buf) {
        if (buf.readableBytes() < 4) {
            return -1;
        }
        int start = buf.readerIndex();
        long length = buf.getUnsignedInt(start);
        if (length < kind.headerSize()) {
            buf.skipBytes(buf.readableBytes());
            throw new FramingLostException("frame length " + length + " below the minimum of " + kind.headerSize());
        }
        if (buf.readableBytes() >= 5) {
            byte version = buf.getByte(start + 4);
            if (version != ProtocolVersion.CURRENT) {
                buf.skipBytes(buf.readableBytes());
                throw new FramingLostException(kind.versionMismatch(version & 0xFF));
            }
        }
        return length > maxFrameLength ? 4 + RequestDescriptor.SEQUENCE_OFFSET + 8 : 4 + length;
    }

    /**
     * The read ended inside a frame: its bytes so far move to a buffer of their own (sized for the
     * whole frame once its length is known), so the next read is split in place instead of being
     * appended to this one. Only the frame that straddles two reads is ever copied.
     */
    private void stash(ChannelHandlerContext ctx, ByteBuf in) {
        int have = in.readableBytes();
        long wanted = wholeFrameBytes(in);
        partial = ctx.alloc().ioBuffer((int) Math.max(have, wanted < 0 ? 64 : wanted));
        partial.writeBytes(in);
    }

    /**
     * Moves bytes of this read into the straddling frame, up to its end.
     *
     * @return true when it is now whole (it is handled by {@link #split}), false when this read
     *         ended before it did (all of it was taken)
     */
    private boolean fillPartial(ByteBuf in) {
        while (true) {
            long wanted = wholeFrameBytes(partial);
            long need = (wanted < 0 ? 4 : wanted) - partial.readableBytes();
            if (need <= 0) {
                return true;
            }
            int n = (int) Math.min(need, in.readableBytes());
            if (n == 0) {
                return false;
            }
            partial.ensureWritable(n);
            partial.writeBytes(in, n);
        }
    }

    private void dropPartial() {
        if (partial != null) {
            partial.release();
            partial = null;
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
        dropPartial();
        super.handlerRemoved0(ctx);
    }
}
