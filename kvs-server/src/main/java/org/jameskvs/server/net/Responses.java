package org.jameskvs.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.Status;

/** Small helpers to answer a request straight away on a context (used off the hot path). */
final class Responses {
    private Responses() {
    }

    static void writeError(ChannelHandlerContext ctx, byte opcode, Status status, long sequence, String reason) {
        ByteBuf out = ctx.alloc().buffer(64);
        Frames.writeError(out, opcode, status, sequence, 0, reason);
        ctx.write(out, ctx.voidPromise());
    }

    static void writeEmptyOk(ChannelHandlerContext ctx, byte opcode, long sequence) {
        ByteBuf out = ctx.alloc().buffer(32);
        Frames.writeEmptyOk(out, opcode, sequence, 0);
        ctx.write(out, ctx.voidPromise());
    }
}
