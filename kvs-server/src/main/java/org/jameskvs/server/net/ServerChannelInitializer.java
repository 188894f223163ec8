package org.jameskvs.server.net;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;

/**
 * One handler per concern, in this order:
 * <pre>
 * [tls]      SslHandler              (only with tls.enabled)
 * frames     RequestFrames           bytes -> frames; oversized frames skipped; lost framing -> exception;
 *                                    once authenticated, frames go straight to requests, in place
 * conn       ConnectionTracker       counts connections for metrics, registers channels for shutdown
 * auth       AuthenticationHandler   AUTH first; removes itself once authenticated
 * requests   RequestDispatcher       applies requests in order, answers in blocks after group commit
 * errors     ConnectionErrorHandler  anything unexpected closes this connection only
 * </pre>
 */
public final class ServerChannelInitializer extends ChannelInitializer<SocketChannel> {
    private final ServerContext server;
    private final SslContext ssl;
    private final ConnectionTracker tracker;

    ServerChannelInitializer(ServerContext server, SslContext ssl, ConnectionTracker tracker) {
        this.server = server;
        this.ssl = ssl;
        this.tracker = tracker;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ChannelPipeline p = ch.pipeline();
        if (ssl != null) {
            p.addLast("tls", ssl.newHandler(ch.alloc()));
        }
        addProtocolHandlers(p, server, tracker);
    }

    /**
     * Everything after TLS: the pipeline of one connection as the protocol sees it. Also used, without
     * a socket and without {@code tracker} (null), by the simulation's embedded server (kvs-server's
     * test-jar, {@code EmbeddedServer}), so the simulation runs this very pipeline.
     */
    static void addProtocolHandlers(ChannelPipeline p, ServerContext server, ConnectionTracker tracker) {
        p.addLast("frames", new RequestFrames(server.config.maxFrameBytes()));
        if (tracker != null) {
            p.addLast("conn", tracker);
        }
        p.addLast("auth", new AuthenticationHandler(server.config.user(), server.config.password()));
        p.addLast("requests", new RequestDispatcher(server));
        p.addLast("errors", new ConnectionErrorHandler());
    }
}
