package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelProgressiveFuture;
import io.netty.channel.ChannelProgressiveFutureListener;
import io.netty.channel.ChannelProgressivePromise;
import io.netty.channel.ChannelPromise;

/**
 * Stamps the time the peer last drained bytes of ours from the socket: the first handler on the
 * socket's side of the pipeline (under TLS it sees the encrypted records).
 *
 * <p>Why: a request's answer cannot come before the server has read the request, and a frame near
 * the 64 MiB limit takes seconds to get through on a busy machine; everything sent after it on the
 * connection (a heartbeat PING) waits behind it. A peer that keeps draining our bytes is reading
 * them: it is alive, and the request is not lost but still being sent.
 *
 * <p>What counts: only bytes the socket takes <em>after</em> the flush that wrote them returned,
 * that is when the socket had been full and the transport wrote on because it drained. Bytes taken
 * at once during a flush only went into the kernel's buffers, which a frozen or unplugged peer fills
 * too (a PING every half second never fills them): they prove nothing. A large write gets a
 * progressive promise (the transport reports each partial write), every other write's completion
 * counts (TLS records are small). Event loop only, read from any thread.
 *
 * <p>Limit: the last stamp is when the socket took our last byte; the peer still has the socket
 * buffers (a few MB) to drain after that, unseen from here, within one request timeout.
 */
final class SendProgress extends ChannelOutboundHandlerAdapter {
    /** Writes at least this large are followed byte-wise; smaller ones leave the socket in one go. */
    private static final int TRACKED_BYTES = 256 * 1024;

    /** Far in the past until the first drained byte (nanoTime may be negative: no 0 sentinel). */
    private volatile long lastNanos = System.nanoTime() - (1L << 62);
    /** Inside a flush through the pipeline: what the socket takes now went into its buffers. */
    private boolean flushing;
    /** A write that failed (the connection is gone) drained nothing: only a success is progress. */
    private final ChannelFutureListener stamp = f -> {
        if (f.isSuccess()) {
            stamp();
        }
    };

    /** {@link System#nanoTime()} when the peer last drained bytes of ours. */
    long lastNanos() {
        return lastNanos;
    }

    private void stamp() {
        if (!flushing) {
            lastNanos = System.nanoTime();
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        flushing = true;
        try {
            ctx.flush();
        } finally {
            flushing = false;
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf b && b.readableBytes() >= TRACKED_BYTES) {
            ChannelPromise outer = promise.unvoid();
            ChannelProgressivePromise tracked = ctx.newProgressivePromise();
            tracked.addListener(new ChannelProgressiveFutureListener() {
                @Override
                public void operationProgressed(ChannelProgressiveFuture f, long progress, long total) {
                    stamp();
                }

                @Override
                public void operationComplete(ChannelProgressiveFuture f) {
                    if (f.isSuccess()) {
                        stamp();
                        outer.trySuccess();
                    } else {
                        outer.tryFailure(f.cause());
                    }
                }
            });
            ctx.write(msg, tracked);
        } else if (!promise.isVoid()) {
            ctx.write(msg, promise.addListener(stamp));
        } else {
            ctx.write(msg, promise);
        }
    }
}
