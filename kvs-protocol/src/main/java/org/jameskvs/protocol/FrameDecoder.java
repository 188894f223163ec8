package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

import java.util.List;

/**
 * Splits the byte stream into frames and emits each as a message: a {@link ByteBuf} holding one
 * frame <i>without</i> its length field (the receiver releases it), or an {@link OversizedFrame}
 * for a frame over the limit (whose bytes are then skipped across reads, keeping framing). Throws
 * {@link FramingLostException} for a length below the minimum header or an unknown version. See
 * {@link FrameSplitter} for handlers that take frames in place instead.
 */
public final class FrameDecoder extends FrameSplitter {
    /**
     * @param maxFrameLength largest accepted frame, counting the bytes after the length field
     * @param kind           the frames this side reads (requests on the server, responses on the client)
     */
    public FrameDecoder(int maxFrameLength, FrameKind kind) {
        super(maxFrameLength, kind);
    }

    public static FrameDecoder forRequests(int maxFrameLength) {
        return new FrameDecoder(maxFrameLength, FrameKind.REQUEST);
    }

    public static FrameDecoder forResponses(int maxFrameLength) {
        return new FrameDecoder(maxFrameLength, FrameKind.RESPONSE);
    }

    @Override
    protected void frame(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        out.add(in.retainedSlice());
    }

    @Override
    protected void oversized(ChannelHandlerContext ctx, byte opcode, long sequence, long length, List<Object> out) {
        out.add(new OversizedFrame(opcode, sequence, length));
    }
}
