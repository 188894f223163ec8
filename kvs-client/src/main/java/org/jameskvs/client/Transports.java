package org.jameskvs.client;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Picks the Netty transport. Epoll is reached by reflection so that the native jar stays an
 * optional run-time addition rather than a dependency; NIO is the norm.
 */
final class Transports {
    private static final String EPOLL = "io.netty.channel.epoll.Epoll";
    private static final String EPOLL_GROUP = "io.netty.channel.epoll.EpollEventLoopGroup";
    private static final String EPOLL_CHANNEL = "io.netty.channel.epoll.EpollSocketChannel";

    private Transports() {
    }

    /** One daemon I/O thread: one connection needs no more, and a forgotten client must not keep the JVM alive. */
    static EventLoopGroup newGroup(boolean preferNative) {
        DefaultThreadFactory threads = new DefaultThreadFactory("kvs-client", true);
        if (preferNative && epollAvailable()) {
            try {
                return (EventLoopGroup) Class.forName(EPOLL_GROUP)
                        .getConstructor(int.class, java.util.concurrent.ThreadFactory.class)
                        .newInstance(1, threads);
            } catch (ReflectiveOperationException | LinkageError e) {
                // fall through to NIO
            }
        }
        return new NioEventLoopGroup(1, threads);
    }

    @SuppressWarnings("unchecked")
    static Class<? extends SocketChannel> channelClass(EventLoopGroup group) {
        if (group.getClass().getName().equals(EPOLL_GROUP)) {
            try {
                return (Class<? extends SocketChannel>) Class.forName(EPOLL_CHANNEL);
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("epoll group without epoll channel class", e);
            }
        }
        return NioSocketChannel.class;
    }

    static boolean epollAvailable() {
        try {
            return (Boolean) Class.forName(EPOLL).getMethod("isAvailable").invoke(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            return false;
        }
    }
}
