package org.jameskvs.server.net;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import org.jameskvs.server.metrics.ServerMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Counts open connections and keeps them in a group so shutdown can close them all. */
@ChannelHandler.Sharable
final class ConnectionTracker extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionTracker.class);
    private final ChannelGroup channels;
    private final ServerMetrics metrics;

    ConnectionTracker(ChannelGroup channels, ServerMetrics metrics) {
        this.channels = channels;
        this.metrics = metrics;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channels.add(ctx.channel());
        metrics.connectionOpened();
        LOG.debug("connection from {}", ctx.channel().remoteAddress());
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        metrics.connectionClosed();
        LOG.debug("connection from {} closed", ctx.channel().remoteAddress());
        ctx.fireChannelInactive();
    }
}
