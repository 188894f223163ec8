package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.internal.PlatformDependent;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One physical connection: the calls waiting to be written, the in-flight window, and the writes.
 *
 * <p>Any thread may {@link #submit}; the request joins a lock-free pending queue and a single drain
 * task on the event loop assigns sequence numbers, encodes into pooled direct buffers and flushes
 * once per drain. Doing both on the event loop is what keeps sequence order equal to wire order, and
 * draining everything queued so far before one flush is what puts many requests in one syscall.
 *
 * <p>Once failed (peer closed, I/O error, protocol error, timeout) a connection is never reused:
 * every waiting and in-flight request completes with {@code CONNECTION_LOST} and the client makes a
 * new one.
 */
final class ClientConnection {
    private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);
    /** Frames are gathered into buffers of about this size before being handed to the channel. */
    private static final int BATCH_BYTES = 64 * 1024;
    private static final int BATCH_INITIAL = 16 * 1024;

    /** Told once, on the event loop, when the connection fails. */
    interface Listener {
        void connectionLost(ClientConnection connection);
    }

    private final Channel channel;
    private final KvsClientConfig config;
    private final Listener listener;
    private final InFlightWindow window;
    /** Many submitting threads, one consumer (the event loop): an array-backed MPSC queue, no node per call. */
    private final Queue<Request<?>> pending = PlatformDependent.newMpscQueue();
    /** Calls submitted and not yet taken by a drain; a drain subtracts what it took once, not per call. */
    private final AtomicInteger pendingCount = new AtomicInteger();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = this::drain;
    private long nextSequence = 1;
    private volatile boolean ready;
    private volatile boolean closed;
    private volatile long lastResponseNanos;
    private ScheduledFuture<?> timeoutCheck;
    private final SendProgress sent;

    ClientConnection(Channel channel, KvsClientConfig config, Listener listener, SendProgress sent) {
        this.channel = channel;
        this.config = config;
        this.listener = listener;
        this.sent = sent;
        this.window = new InFlightWindow(config.maxInFlight());
        this.lastResponseNanos = System.nanoTime();
    }

    ResponseHandler newResponseHandler() {
        return new ResponseHandler(this, window, config.maxFrameBytes());
    }

    /** Starts the timeout checks; call once the channel is registered. */
    void start() {
        long tick = Math.max(5, Math.min(config.requestTimeout().toMillis() / 8, 250));
        channel.eventLoop().execute(() -> {
            if (!closed) {
                timeoutCheck = channel.eventLoop().scheduleAtFixedRate(this::checkTimeouts, tick, tick, TimeUnit.MILLISECONDS);
            }
        });
    }

    Channel channel() {
        return channel;
    }

    EventLoop eventLoop() {
        return channel.eventLoop();
    }

    /** Authenticated and not failed: user calls may be submitted. */
    boolean isReady() {
        return ready;
    }

    void markReady() {
        ready = !closed;
    }

    boolean isClosed() {
        return closed;
    }

    long lastResponseNanos() {
        return lastResponseNanos;
    }

    /** When the peer last drained bytes of ours (see {@link SendProgress}). */
    long lastSendProgressNanos() {
        return sent.lastNanos();
    }

    void responseReceived() {
        lastResponseNanos = System.nanoTime();
    }

    int inFlight() {
        return window.size();
    }

    /** Queues a request for writing; never blocks. The future always completes, with a status. */
    <T> CompletableFuture<T> submit(Request<T> request) {
        if (closed) {
            request.fail(Status.CONNECTION_LOST, "not connected");
            return request;
        }
        if (pendingCount.incrementAndGet() > config.maxPending()) {
            pendingCount.decrementAndGet();
            request.fail(Status.BACKLOG_FULL, "client backlog full: " + config.maxPending()
                    + " calls already wait to be written; nothing was sent");
            return request;
        }
        pending.offer(request);
        scheduleDrain();
        return request;
    }

    private void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                channel.eventLoop().execute(drainTask);
            } catch (RejectedExecutionException e) {
                drainScheduled.set(false);
                closed = true;
                ready = false;
                failPending("client event loop shut down");
            }
        }
    }

    /** Writes as many waiting requests as the window and the socket take, then flushes once. */
    void drain() {
        drainScheduled.set(false);
        if (closed) {
            failPending("connection lost");
            return;
        }
        ByteBuf batch = null;
        boolean wrote = false;
        int taken = 0;
        long now = System.nanoTime();
        while (window.hasRoom() && channel.isWritable()) {
            Request<?> r = pending.poll();
            if (r == null) {
                break;
            }
            taken++;
            if (now - r.deadlineNanos > 0 && now - sent.lastNanos() > requestTimeoutNanos()) {
                // Never sent, so the connection stays good; only this call gives up. Not while the
                // peer is still draining a large frame ahead of it: then it only waits its turn.
                r.fail(Status.TIMEOUT, "timed out waiting for room in the in-flight window (not sent)");
                continue;
            }
            if (batch != null && batch.writableBytes() < r.sizeHint && batch.isReadable()) {
                channel.write(batch).addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
                wrote = true;
                batch = null;
            }
            if (batch == null) {
                batch = channel.alloc().directBuffer(Math.max(BATCH_INITIAL, r.sizeHint));
            }
            int mark = batch.writerIndex();
            try {
                r.encode(batch, nextSequence);
            } catch (RuntimeException e) {
                batch.writerIndex(mark);
                r.fail(Status.BAD_REQUEST, "cannot encode " + r.opcode + ": " + e.getMessage());
                continue;
            }
            nextSequence++;
            window.add(r);
            if (batch.readableBytes() >= BATCH_BYTES) {
                channel.write(batch).addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
                wrote = true;
                batch = null;
            }
        }
        if (taken > 0) {
            pendingCount.addAndGet(-taken);
        }
        if (batch != null) {
            if (batch.isReadable()) {
                channel.write(batch).addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
                wrote = true;
            } else {
                batch.release();
            }
        }
        if (wrote) {
            channel.flush();
        }
    }

    /** After responses freed window slots, or the socket drained. Event loop only. */
    void drainIfWaiting() {
        if (!closed && !pending.isEmpty()) {
            drain();
        }
    }

    /**
     * The oldest request times out when its deadline passed and the socket has not taken bytes of
     * ours for a request timeout: a large frame still being sent (the peer reading it) is not late;
     * its time starts again with its last byte.
     */
    private void checkTimeouts() {
        Request<?> head = window.peek();
        long now = System.nanoTime();
        if (head != null && now - head.deadlineNanos > 0 && now - sent.lastNanos() > requestTimeoutNanos()) {
            window.poll();
            fail("request " + head.sequence + " (" + head.opcode + ") timed out; responses are in order, so the connection is reset",
                    head);
        }
        // Calls waiting behind a full window are younger than its head: they never time out first.
    }

    private long requestTimeoutNanos() {
        return config.requestTimeout().toNanos();
    }

    /** Fails this connection from any thread. */
    void close(String reason) {
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            fail(reason);
            return;
        }
        try {
            loop.execute(() -> fail(reason));
        } catch (RejectedExecutionException e) {
            closed = true;
            ready = false;
            failPending(reason);
            channel.close();
        }
    }

    /** Completes everything with CONNECTION_LOST, closes the channel and tells the listener once. Event loop only. */
    void fail(String reason) {
        fail(reason, null);
    }

    /**
     * @param timedOut the request whose timeout broke the connection, completed with TIMEOUT;
     *                 only after the connection is marked failed, so its callback sees a client
     *                 that is not connected rather than sending on a dying connection
     */
    private void fail(String reason, Request<?> timedOut) {
        boolean first = !closed;
        closed = true;
        ready = false;
        if (timeoutCheck != null) {
            timeoutCheck.cancel(false);
            timeoutCheck = null;
        }
        if (timedOut != null) {
            timedOut.fail(Status.TIMEOUT, "no response within " + config.requestTimeout().toMillis() + " ms");
        }
        window.failAll(Status.CONNECTION_LOST, reason);
        failPending(reason);
        if (first) {
            LOG.debug("connection {} failed: {}", channel, reason);
            channel.close();
            listener.connectionLost(this);
        }
    }

    private void failPending(String reason) {
        Request<?> r;
        while ((r = pending.poll()) != null) {
            pendingCount.decrementAndGet();
            r.fail(Status.CONNECTION_LOST, reason);
        }
    }
}
