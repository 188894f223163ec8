package org.jameskvs.server.net;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.jameskvs.server.ServerConfig;
import org.jameskvs.server.metrics.ServerMetrics;
import org.jameskvs.server.storage.QueueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The protocol listener. Every connection and the store live on ONE event-loop thread: the store is
 * single-threaded by design (no locks on the hot path, as the paper's event-driven KVS), and group
 * commit works across connections because they all share that loop. A second thread accepts
 * connections.
 */
public final class NetworkServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NetworkServer.class);

    private final EventLoopGroup boss = new NioEventLoopGroup(1, new DefaultThreadFactory("kvs-accept"));
    private final EventLoopGroup worker = new NioEventLoopGroup(1, new DefaultThreadFactory("kvs-io"));
    private final EventLoop loop = worker.next();
    private final ChannelGroup channels = new DefaultChannelGroup(loop);
    private final ServerConfig config;
    private final QueueStore store;
    private final GroupCommitter committer;
    private final Channel serverChannel;
    private final ScheduledFuture<?> maintenance;

    public NetworkServer(ServerConfig config, QueueStore store, ServerMetrics metrics) throws Exception {
        this.config = config;
        this.store = store;
        this.committer = new GroupCommitter(loop, store, metrics);
        ServerContext context = new ServerContext(config, store, metrics, committer);
        // Queues recovered from the journal get their gauges now, on the loop that owns the store.
        loop.submit(() -> store.queues().forEach(metrics::queueCreated)).get();
        SslContext ssl = ServerTls.context(config);
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, worker)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(4 << 20, 16 << 20))
                .childHandler(new ServerChannelInitializer(context, ssl, new ConnectionTracker(channels, metrics)));
        serverChannel = b.bind(config.listenHost(), config.listenPort()).sync().channel();
        maintenance = loop.scheduleWithFixedDelay(this::maintain, config.maintenanceIntervalMillis(),
                config.maintenanceIntervalMillis(), TimeUnit.MILLISECONDS);
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** Runs a task on the store's thread and waits for it (for tests and admin). */
    public <T> T onStoreThread(java.util.concurrent.Callable<T> task) throws Exception {
        return loop.submit(task).get(30, TimeUnit.SECONDS);
    }

    private void maintain() {
        try {
            store.maintenance();
        } catch (RuntimeException e) {
            LOG.error("journal maintenance failed; will retry", e);
        }
    }

    /**
     * Graceful stop: no new connections; requests already read are applied, committed and answered;
     * then connections close and the journal is closed.
     */
    @Override
    public void close() {
        try {
            serverChannel.close().sync();
            maintenance.cancel(false);
            Future<?> drain = loop.submit(() -> {
                committer.commitAndFlush();
                channels.close();
            });
            drain.get(config.shutdownGraceMillis(), TimeUnit.MILLISECONDS);
            channels.close().await(config.shutdownGraceMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("shutdown did not drain cleanly", e);
        } finally {
            try {
                loop.submit(store::close).get(config.shutdownGraceMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                LOG.warn("closing the store failed", e);
            }
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            worker.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
