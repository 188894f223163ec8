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
 * {@link FramingLostException}.
 */
public abstract class FrameSplitter extends ByteToMessageDecoder {
    private final int maxFrameLength;
    private final int minFrameLength;
    private long bytesToSkip;
    /** True while a frame is being handled: a callback that re-enters the decoder (see decode) is ignored. */
    private boolean inFrame;

    /**
     * @param maxFrameLength largest accepted frame, counting the bytes after the length field
     * @param minFrameLength smallest valid frame (the header size of the frames this side reads)
     */
    protected FrameSplitter(int maxFrameLength, int minFrameLength) {
        this.maxFrameLength = maxFrameLength;
        this.minFrameLength = minFrameLength;
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
            while (true) {
                if (bytesToSkip > 0) {
                    int skip = (int) Math.min(bytesToSkip, in.readableBytes());
                    in.skipBytes(skip);
                    bytesToSkip -= skip;
                    if (bytesToSkip > 0) {
                        return;
                    }
                }
                // Wait for length + version + opcode + flags + sequence (enough to answer an oversized frame).
                if (in.readableBytes() < 4) {
                    return;
                }
                int start = in.readerIndex();
                long length = in.getUnsignedInt(start);
                if (length < minFrameLength) {
                    in.skipBytes(in.readableBytes());
                    throw new FramingLostException("frame length " + length + " below the minimum of " + minFrameLength);
                }
                if (in.readableBytes() >= 5) {
                    byte version = in.getByte(start + 4);
                    if (version != ProtocolVersion.CURRENT) {
                        in.skipBytes(in.readableBytes());
                        throw new FramingLostException("unsupported protocol version " + version);
                    }
                }
                if (length > maxFrameLength) {
                    if (in.readableBytes() < 4 + RequestDescriptor.SEQUENCE_OFFSET + 8) {
                        return;
                    }
                    byte opcode = in.getByte(start + 4 + RequestDescriptor.OPCODE_OFFSET);
                    long sequence = in.getLong(start + 4 + RequestDescriptor.SEQUENCE_OFFSET);
                    in.skipBytes(4);
                    bytesToSkip = length;
                    oversized(ctx, opcode, sequence, length, out);
                    continue;
                }
                if (in.readableBytes() < 4 + length) {
                    return;
                }
                if (!retained) {
                    // Once per read, not per frame: keeps the buffer alive should a frame's handler
                    // make the decoder drop it (channel closed), so the indexes can still be restored.
                    in.retain();
                    retained = true;
                }
                int frameStart = start + 4;
                int frameEnd = frameStart + (int) length;
                int end = in.writerIndex();
                in.setIndex(frameStart, frameEnd);
                inFrame = true;
                try {
                    frame(ctx, in, out);
                } finally {
                    inFrame = false;
                    in.setIndex(frameEnd, end);
                }
                if (internalBuffer() != in) {
                    // The decoder let go of this buffer meanwhile (the connection closed): stop here.
                    in.setIndex(end, end);
                    return;
                }
            }
        } finally {
            if (retained) {
                in.release();
            }
        }
    }
}
