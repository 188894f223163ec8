package org.jameskvs.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.jameskvs.protocol.FrameKind;
import org.jameskvs.protocol.FrameSplitter;
import org.jameskvs.protocol.OversizedFrame;

import java.util.List;

/**
 * The server's framing (bytes to request frames; oversized frames skipped; lost framing throws).
 * Until the connection is authenticated, each frame goes up the pipeline as a buffer of its own, so
 * {@link AuthenticationHandler} sees it. Once the {@link RequestDispatcher} has received its first
 * frame that way (it is only reached after a successful AUTH), it asks to be handed the frames
 * directly ({@link #deliverTo}): from the next read on, each frame is applied in place in the
 * receive buffer, with no slice, reference count or pipeline hop per request.
 *
 * <p>Order is kept: frames of one read are all fired up the pipeline before the next read is split,
 * and direct delivery starts with a later split.
 */
final class RequestFrames extends FrameSplitter {
    private RequestDispatcher dispatcher;

    RequestFrames(int maxFrameLength) {
        super(maxFrameLength, FrameKind.REQUEST);
    }

    /** From now on, frames go straight to {@code target}. Event loop only. */
    void deliverTo(RequestDispatcher target) {
        dispatcher = target;
    }

    @Override
    protected void frame(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (dispatcher != null) {
            dispatcher.frame(in);
        } else {
            out.add(in.retainedSlice());
        }
    }

    @Override
    protected void oversized(ChannelHandlerContext ctx, byte opcode, long sequence, long length, List<Object> out) {
        if (dispatcher != null) {
            dispatcher.oversized(opcode, sequence, length);
        } else {
            out.add(new OversizedFrame(opcode, sequence, length));
        }
    }
}
