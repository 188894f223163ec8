package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import org.jameskvs.protocol.FrameKind;
import org.jameskvs.protocol.FrameSplitter;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.FramingLostException;
import org.jameskvs.protocol.Status;

import java.util.List;

/**
 * The connection's only inbound handler: splits the responses and matches each against the head of
 * the in-flight window, completing its future. Frames are read in place in the receive buffer
 * ({@link FrameSplitter}): a response costs no buffer slice, reference count or pipeline hop. The
 * server answers in request order, so any other sequence number means the two sides disagree about
 * the stream: everything is failed and the connection dropped rather than risk giving a caller
 * someone else's answer. A {@code BAD_FRAME} answer is the server's last word before it closes the
 * connection (lost framing, e.g. another protocol version): the connection fails with its reason.
 *
 * <p>Futures complete here, on the event loop, so callers' synchronous callbacks run on it too.
 */
final class ResponseHandler extends FrameSplitter {
    private final ClientConnection connection;
    private final InFlightWindow window;

    ResponseHandler(ClientConnection connection, InFlightWindow window, int maxFrameBytes) {
        super(maxFrameBytes, FrameKind.RESPONSE);
        this.connection = connection;
        this.window = window;
    }

    @Override
    protected void frame(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) {
        // The rest of a read after a failure belongs to no one now.
        if (connection.isClosed()) {
            return;
        }
        Status status = Frames.responseStatus(frame);
        if (status == Status.BAD_FRAME) {
            // Answers no request (sequence 0): the server is closing; its reason says why.
            Frames.skipResponseHeader(frame);
            connection.fail("server closed the connection: " + ResultDecoders.reason(frame, status));
            return;
        }
        Request<?> head = expect(Frames.responseSequence(frame), Frames.responseOpcode(frame));
        if (head == null) {
            return;
        }
        long txn = Frames.responseTxn(frame);
        Frames.skipResponseHeader(frame);
        if (status == Status.OK) {
            head.completeOk(txn, frame);
        } else {
            head.completeError(status, txn, ResultDecoders.reason(frame, status), frame);
        }
    }

    @Override
    protected void oversized(ChannelHandlerContext ctx, byte opcode, long sequence, long length, List<Object> out) {
        if (connection.isClosed()) {
            return;
        }
        Request<?> head = expect(sequence, opcode);
        if (head != null) {
            head.fail(Status.FRAME_TOO_LARGE, "response of " + length + " bytes exceeds maxFrameBytes "
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
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        connection.responseReceived();
        connection.drainIfWaiting();
        super.channelReadComplete(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            connection.drainIfWaiting();
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        // The decoder first hands over the frames still buffered; then everything left fails.
        super.channelInactive(ctx);
        connection.fail("connection closed");
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        connection.fail(cause instanceof FramingLostException
                ? "framing lost: " + cause.getMessage() : "connection failed: " + cause);
    }
}
