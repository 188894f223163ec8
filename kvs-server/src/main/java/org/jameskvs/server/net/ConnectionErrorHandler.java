package org.jameskvs.server.net;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import org.jameskvs.protocol.FramingLostException;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.io.IOException;

/**
 * Last handler of the pipeline: whatever reaches it ends only this connection, never the server.
 * Lost framing gets a BAD_FRAME answer (sequence 0) before the close, so the client learns why.
 */
final class ConnectionErrorHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionErrorHandler.class);

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (cause instanceof FramingLostException || root instanceof FramingLostException) {
            LOG.warn("closing {}: {}", ctx.channel().remoteAddress(), cause.getMessage());
            Responses.writeError(ctx, (byte) 0, Status.BAD_FRAME, 0, cause.getMessage());
            // Close once the answer is on the wire (an empty write completes after everything before it).
            ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        } else if (root instanceof NotSslRecordException) {
            // Not the exception's message: it holds the bytes received, a plain-text client's AUTH password.
            LOG.info("closing {}: not a TLS client (plain TCP to a TLS-only server)", ctx.channel().remoteAddress());
            ctx.close();
        } else if (root instanceof SSLException) {
            // E.g. a client with an untrusted certificate, or none under tls.clientAuth=require: its problem.
            LOG.info("TLS with {} failed: {}", ctx.channel().remoteAddress(), root.getMessage());
            ctx.close();
        } else if (root instanceof IOException) {
            LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(), root.toString());
            ctx.close();
        } else {
            LOG.warn("closing connection {} after an unexpected error", ctx.channel().remoteAddress(), cause);
            ctx.close();
        }
    }
}
