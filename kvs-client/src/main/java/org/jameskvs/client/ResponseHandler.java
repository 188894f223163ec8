package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.OversizedFrame;
import org.jameskvs.protocol.Status;

/**
 * Last inbound handler, after {@link org.jameskvs.protocol.FrameDecoder}: matches each response
 * against the head of the in-flight window and completes its future. The server answers in request
 * order, so any other sequence number means the two sides disagree about the stream: everything is
 * failed and the connection dropped rather than risk giving a caller someone else's answer.
 *
 * <p>Futures complete here, on the event loop, so callers' synchronous callbacks run on it too.
 */
final class ResponseHandler extends ChannelInboundHandlerAdapter {
    private final ClientConnection connection;
    private final InFlightWindow window;

    ResponseHandler(ClientConnection connection, InFlightWindow window) {
        this.connection = connection;
        this.window = window;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf frame) {
            try {
                onFrame(frame);
            } finally {
                frame.release();
            }
        } else if (msg instanceof OversizedFrame oversized) {
            onOversized(oversized);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onFrame(ByteBuf frame) {
        // The decoder hands over every frame of a read even after a failure; they belong to no one now.
        if (connection.isClosed()) {
            return;
        }
        Request<?> head = expect(Frames.responseSequence(frame), Frames.responseOpcode(frame));
        if (head == null) {
            return;
        }
        Status status = Frames.responseStatus(frame);
        long txn = Frames.responseTxn(frame);
        Frames.skipResponseHeader(frame);
        if (status == Status.OK) {
            head.completeOk(txn, frame);
        } else {
            head.completeError(status, txn, ResultDecoders.reason(frame, status));
        }
    }

    private void onOversized(OversizedFrame oversized) {
        if (connection.isClosed()) {
            return;
        }
        Request<?> head = expect(oversized.sequence(), oversized.opcode());
        if (head != null) {
            head.fail(Status.FRAME_TOO_LARGE, "response of " + oversized.length() + " bytes exceeds maxFrameBytes "
                    + "(skipped; the request itself was applied)");
        }
    }

    /** @return the matching head, removed from the window; or null after failing the connection */
    private Request<?> expect(long sequence, byte opcode) {
        Request<?> head = window.peek();
        if (head == null || head.sequence != sequence || head.opcode.code() != opcode) {
            connection.fail(head == null
                    ? "protocol error: response " + sequence + " with no request in flight"
                    : "protocol error: response " + sequence + " (opcode " + opcode + ") while expecting "
                    + head.sequence + " (" + head.opcode + ")");
            return null;
        }
        return window.poll();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        connection.responseReceived();
        connection.drainIfWaiting();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            connection.drainIfWaiting();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        connection.fail("connection closed");
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        connection.fail("connection failed: " + cause);
    }
}
