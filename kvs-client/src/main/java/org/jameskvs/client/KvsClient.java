package org.jameskvs.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import org.jameskvs.protocol.ListCodec;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.PingCodec;
import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Asynchronous, pipelined client of one KVS server over one persistent connection.
 *
 * <h2>Results</h2>
 * Every call returns at once; its future completes with a result carrying a {@link Status}, never
 * exceptionally. {@code TIMEOUT} and {@code CONNECTION_LOST} mean the outcome is unknown.
 *
 * <h2>Threads</h2>
 * Futures complete on the Netty event loop thread of the connection. Callbacks attached with
 * {@code thenApply}/{@code thenAccept} run on that thread: they must be short and must never block
 * (no {@code join()}/{@code get()} on another KVS future there: that future can only complete on
 * this same thread, which would deadlock). For blocking or slow work use
 * {@code thenApplyAsync(fn, yourExecutor)}. Calls may be made from any thread, including from
 * callbacks; calls made by one thread are sent, applied and answered in the order made.
 *
 * <h2>Back-pressure</h2>
 * At most {@link KvsClientConfig#maxInFlight()} requests are on the wire. Further calls do not block:
 * they wait in a pending queue and their futures complete later; once
 * {@link KvsClientConfig#maxPending()} calls wait, new calls complete at once with
 * {@code BACKLOG_FULL} (nothing sent).
 *
 * <h2>Connection loss</h2>
 * When the connection fails (peer close, I/O error, protocol error, or a request timeout, which
 * breaks the in-order stream) every in-flight and waiting call completes with
 * {@code CONNECTION_LOST} (the timed-out one with {@code TIMEOUT}). The client then reconnects with
 * backoff, forever until {@link #close()}, re-authenticates, and re-opens every open
 * {@link KvsQueue} with its original options (a new server handle) before it accepts calls on that
 * queue again. While disconnected, calls are not queued: they complete at once with
 * {@code CONNECTION_LOST}. A queue whose re-open is refused (e.g. {@code STALE_EPOCH}: another
 * writer took it over) is ended: its calls complete with that status from then on. A re-open
 * answered {@code QUEUE_LOCKED} (the server has not yet noticed the old connection is gone) is
 * retried a few times with backoff first.
 */
public final class KvsClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvsClient.class);
    private static final AttributeKey<ClientConnection> CONNECTION = AttributeKey.valueOf(KvsClient.class, "connection");
    private static final int REOPEN_ATTEMPTS = 6;
    private static final int SMALL_REQUEST_HINT = 64;

    private final KvsClientConfig config;
    private final SslContext sslContext;
    private final EventLoopGroup group;
    private final boolean ownsGroup;
    private final Bootstrap bootstrap;
    private final Backoff backoff;
    private final long requestTimeoutNanos;
    private final Set<QueueHandle> openQueues = ConcurrentHashMap.newKeySet();
    /** Queues whose DAMAGED flag an OPEN answer carried, already logged. */
    private final Set<String> damagedWarned = ConcurrentHashMap.newKeySet();
    /** The authenticated connection user calls go to; null while (re)connecting. */
    private final AtomicReference<ClientConnection> current = new AtomicReference<>();
    /** The last connection that was authenticated, for {@link #lastResponseNanos()} across reconnects. */
    private volatile ClientConnection latest;
    /** How many connections were authenticated so far (a reconnect makes a new one). */
    private volatile long connections;
    private volatile boolean closed;

    private KvsClient(KvsClientConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.sslContext = TlsContexts.forClient(config);
        this.ownsGroup = config.eventLoopGroup() == null;
        this.group = ownsGroup ? Transports.newGroup(config.preferNativeTransport()) : config.eventLoopGroup();
        this.backoff = new Backoff(config.reconnectBackoffInitial(), config.reconnectBackoffMax());
        this.requestTimeoutNanos = config.requestTimeout().toNanos();
        this.bootstrap = new Bootstrap()
                .group(group)
                .channel(Transports.channelClass(group))
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis()))
                .option(ChannelOption.TCP_NODELAY, true) // we batch ourselves; Nagle would only add latency
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 * 1024, 1024 * 1024))
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        SendProgress sent = new SendProgress();
                        ClientConnection conn = new ClientConnection(ch, config, KvsClient.this::connectionLost, sent);
                        ch.attr(CONNECTION).set(conn);
                        ch.pipeline().addLast(sent); // first: on the socket's side of TLS
                        if (sslContext != null) {
                            ch.pipeline().addLast(TlsContexts.newHandler(sslContext, ch.alloc(), config));
                        }
                        ch.pipeline().addLast(conn.newResponseHandler());
                    }
                });
    }

    /**
     * Connects, authenticates, and returns a ready client. Blocks until then.
     *
     * @throws KvsException {@code AUTH_FAILED} on bad credentials; {@code CONNECTION_LOST} when the
     *                      server cannot be reached or the TLS handshake fails; {@code TIMEOUT}
     * @throws IllegalArgumentException on unusable TLS settings
     */
    public static KvsClient connect(KvsClientConfig config) {
        KvsClient client = new KvsClient(config);
        long waitMillis = 2 * config.connectTimeout().toMillis() + config.requestTimeout().toMillis() + 1000;
        try {
            client.establish().get(waitMillis, TimeUnit.MILLISECONDS);
            return client;
        } catch (ExecutionException e) {
            client.close();
            Throwable cause = e.getCause();
            if (cause instanceof KvsException k) {
                throw new KvsException(k.status(), reasonOf(k), k);
            }
            throw new KvsException(Status.CONNECTION_LOST, String.valueOf(cause), cause);
        } catch (TimeoutException e) {
            client.close();
            throw new KvsException(Status.TIMEOUT, "not connected to " + where(config) + " within " + waitMillis + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw new KvsException(Status.CONNECTION_LOST, "interrupted while connecting to " + where(config), e);
        }
    }

    /** Opens (write mode: creates or takes over) a queue; the result's {@code queue} is non-null when OK. */
    public CompletableFuture<OpenResult> open(String queue, OpenOptions options) {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(options, "options");
        ClientConnection conn = readyConnection();
        OpenDecoder decoder = new OpenDecoder(queue, options, conn);
        if (conn == null) {
            return Request.failed(decoder, Status.CONNECTION_LOST, notConnectedReason());
        }
        return conn.submit(new Request<>(Opcode.OPEN, 0, SMALL_REQUEST_HINT + 3 * queue.length(), deadline(),
                openEncoder(queue, options), decoder));
    }

    /** Round trip to the server; {@link Ack#value()} is the server's clock (epoch ms). */
    public CompletableFuture<Ack> ping() {
        ClientConnection conn = readyConnection();
        if (conn == null) {
            return Request.failed(ResultDecoders.PING, Status.CONNECTION_LOST, notConnectedReason());
        }
        return conn.submit(new Request<>(Opcode.PING, 0, SMALL_REQUEST_HINT, deadline(),
                (out, seq, h) -> PingCodec.writeRequest(out, seq), ResultDecoders.PING));
    }

    /** Every queue on the server, with its size and transaction number. */
    public CompletableFuture<ListResult> listQueues() {
        ClientConnection conn = readyConnection();
        if (conn == null) {
            return Request.failed(ResultDecoders.LIST, Status.CONNECTION_LOST, notConnectedReason());
        }
        return conn.submit(new Request<>(Opcode.LIST, 0, SMALL_REQUEST_HINT, deadline(),
                (out, seq, h) -> ListCodec.writeRequest(out, seq), ResultDecoders.LIST));
    }

    /** Connected and authenticated: calls are being sent (queues may still be re-opening). */
    public boolean isConnected() {
        return readyConnection() != null;
    }

    /**
     * {@link System#nanoTime()} when bytes last arrived from the server, on this or a previous
     * connection; for a heartbeat that pings when the link has been quiet.
     */
    public long lastResponseNanos() {
        ClientConnection c = latest;
        return c == null ? 0 : c.lastResponseNanos();
    }

    /**
     * {@link System#nanoTime()} when the server last drained bytes of ours from the socket after it
     * had been full (a large frame being sent makes progress; bytes that only went into the kernel's
     * buffers do not count), on this or a previous connection; 0 before any connection. A peer that
     * keeps reading is alive even while its answers wait behind a large frame.
     */
    public long lastSendProgressNanos() {
        ClientConnection c = latest;
        return c == null ? 0 : c.lastSendProgressNanos();
    }

    /**
     * How many connections were authenticated so far: a change means a reconnect, possibly to a
     * restarted server, whose bytes say nothing about the connection before it.
     */
    public long connectionNumber() {
        return connections;
    }

    public KvsClientConfig config() {
        return config;
    }

    /**
     * Closes the connection and stops reconnecting. Pending calls and calls on open queues complete
     * with {@code CONNECTION_LOST}. The server releases the handles with the connection. Waits
     * briefly for the channel (and the client's own I/O thread) to stop, unless called on it.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (QueueHandle q : openQueues) {
            q.fail(Status.CONNECTION_LOST, "client closed");
        }
        openQueues.clear();
        ClientConnection c = current.getAndSet(null);
        if (c != null) {
            c.close("client closed");
            if (!c.eventLoop().inEventLoop()) {
                c.channel().closeFuture().awaitUninterruptibly(1000);
            }
        }
        if (ownsGroup) {
            io.netty.util.concurrent.Future<?> done = group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            if (!group.next().inEventLoop()) {
                done.awaitUninterruptibly(3000);
            }
        }
    }

    // ---- package-private: used by QueueHandle

    long deadline() {
        return System.nanoTime() + requestTimeoutNanos;
    }

    void forget(QueueHandle queue) {
        openQueues.remove(queue);
    }

    CompletableFuture<Ack> releaseHandle(ClientConnection conn, int handle) {
        return conn.submit(new Request<>(Opcode.CLOSE, handle, SMALL_REQUEST_HINT, deadline(),
                (out, seq, h) -> Requests.empty(out, Opcode.CLOSE, seq, h), ResultDecoders.ACK));
    }

    // ---- connecting

    private ClientConnection readyConnection() {
        ClientConnection c = current.get();
        return c != null && c.isReady() ? c : null;
    }

    private String notConnectedReason() {
        return closed ? "client closed" : "not connected to " + where(config) + " (reconnecting)";
    }

    /** TCP connect, TLS handshake, AUTH; then the connection becomes current and queues are re-opened. */
    private CompletableFuture<ClientConnection> establish() {
        CompletableFuture<ClientConnection> result = new CompletableFuture<>();
        ChannelFuture connecting;
        try {
            connecting = bootstrap.connect(config.host(), config.port());
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new KvsException(Status.CONNECTION_LOST, "client event loop shut down", e));
            return result;
        }
        connecting.addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                result.completeExceptionally(new KvsException(Status.CONNECTION_LOST,
                        "cannot connect to " + where(config) + ": " + f.cause(), f.cause()));
                return;
            }
            ClientConnection conn = f.channel().attr(CONNECTION).get();
            SslHandler ssl = f.channel().pipeline().get(SslHandler.class);
            if (ssl == null) {
                authenticate(conn, result);
                return;
            }
            ssl.handshakeFuture().addListener(h -> {
                if (h.isSuccess()) {
                    authenticate(conn, result);
                } else {
                    conn.close("TLS handshake failed");
                    result.completeExceptionally(new KvsException(Status.CONNECTION_LOST,
                            "TLS handshake with " + where(config) + " failed: " + h.cause(), h.cause()));
                }
            });
        });
        return result;
    }

    private void authenticate(ClientConnection conn, CompletableFuture<ClientConnection> result) {
        conn.start();
        String user = config.user();
        String password = config.password();
        Request<Ack> auth = new Request<>(Opcode.AUTH, 0, SMALL_REQUEST_HINT + 3 * (user.length() + password.length()),
                deadline(), (out, seq, h) -> Requests.auth(out, seq, user, password), ResultDecoders.ACK);
        conn.submit(auth).thenAccept(ack -> {
            try {
                if (ack.isOk()) {
                    onAuthenticated(conn, result);
                } else {
                    conn.close("AUTH answered " + ack.status());
                    result.completeExceptionally(new KvsException(ack.status(), ack.reason()));
                }
            } catch (RuntimeException e) {
                conn.close("handshake failed: " + e);
                result.completeExceptionally(e);
            }
        });
    }

    private void onAuthenticated(ClientConnection conn, CompletableFuture<ClientConnection> result) {
        if (closed) {
            conn.close("client closed");
            result.completeExceptionally(new KvsException(Status.CONNECTION_LOST, "client closed"));
            return;
        }
        conn.markReady();
        latest = conn;
        connections++;
        backoff.reset();
        current.set(conn);
        // The connection may have failed before it became current; its loss was then ignored.
        if (conn.isClosed()) {
            connectionLost(conn);
            result.completeExceptionally(new KvsException(Status.CONNECTION_LOST, "connection lost during handshake"));
            return;
        }
        for (QueueHandle q : openQueues) {
            reopen(q, conn, 0);
        }
        result.complete(conn);
    }

    /** Called once per failed connection, on its event loop. Only the current connection's loss starts a reconnect. */
    private void connectionLost(ClientConnection conn) {
        if (current.compareAndSet(conn, null) && !closed) {
            LOG.warn("connection to {} lost; reconnecting", where(config));
            scheduleReconnect();
        }
    }

    private void scheduleReconnect() {
        long delay = backoff.nextDelayMillis();
        try {
            group.next().schedule(this::reconnect, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debug("event loop shut down; not reconnecting");
        }
    }

    private void reconnect() {
        if (closed) {
            return;
        }
        establish().whenComplete((conn, error) -> {
            if (error == null) {
                LOG.info("reconnected to {}", where(config));
            } else if (!closed) {
                LOG.info("reconnect to {} failed: {}", where(config), error.getMessage());
                scheduleReconnect();
            }
        });
    }

    private void reopen(QueueHandle q, ClientConnection conn, int attempt) {
        if (closed || conn.isClosed() || !q.isOpen()) {
            return;
        }
        OpenOptions o = q.options();
        if (config.reopenOnSameStoreOnly() && o.store() == 0 && q.store() != 0) {
            o = o.withStore(q.store()); // never moves to an emptied store: refused, STORE_CHANGED
        }
        conn.submit(new Request<>(Opcode.OPEN, 0, SMALL_REQUEST_HINT + 3 * q.name().length(), deadline(),
                openEncoder(q.name(), o), ResultDecoders.OPENED))
                .thenAccept(opened -> onReopened(q, conn, attempt, opened));
    }

    private void onReopened(QueueHandle q, ClientConnection conn, int attempt, ResultDecoders.Opened opened) {
        Status status = opened.status();
        if (status == Status.OK) {
            if ((opened.flags() & QueueFlags.DAMAGED) != 0) {
                // The server restarted with journal records of this queue lost; a caller that
                // compares copies only sees it on its own OPEN or STAT, so it is said here too.
                LOG.warn("queue {} re-opened after reconnect is DAMAGED on the server: it may lack acknowledged"
                        + " messages or hold deleted ones", q.name());
            }
            if (opened.store() != 0 && q.store() != 0 && opened.store() != q.store()) {
                LOG.error("queue {} re-opened after reconnect on another store of {} ({} where it was {}): the server"
                        + " lost the data it held", q.name(), where(config), Long.toHexString(opened.store()),
                        Long.toHexString(q.store()));
            }
            if (!q.bind(conn, opened.handle(), opened.store())) {
                releaseHandle(conn, opened.handle());
            }
        } else if (status == Status.QUEUE_LOCKED && attempt < REOPEN_ATTEMPTS) {
            long delay = Math.min(config.reconnectBackoffMax().toMillis(),
                    config.reconnectBackoffInitial().toMillis() << attempt);
            conn.eventLoop().schedule(() -> reopen(q, conn, attempt + 1), delay, TimeUnit.MILLISECONDS);
        } else if (!status.isIndeterminate()) {
            LOG.warn("re-opening queue {} after reconnect failed: {} {}", q.name(), status, opened.reason());
            q.fail(status, "re-open after reconnect failed: " + opened.reason());
            openQueues.remove(q);
        }
        // Indeterminate: this connection is gone too; the next one re-opens the queue.
    }

    private static Request.Encoder openEncoder(String queue, OpenOptions o) {
        String owner = o.owner() == null ? "" : o.owner();
        return (out, seq, h) -> Requests.open(out, seq, queue, o.mode(), o.epoch(), o.maxMessages(), o.maxBytes(), owner,
                o.store());
    }

    private static String where(KvsClientConfig config) {
        return config.host() + ":" + config.port();
    }

    private static String reasonOf(KvsException e) {
        String m = e.getMessage();
        String prefix = e.status() + ": ";
        return m != null && m.startsWith(prefix) ? m.substring(prefix.length()) : m;
    }

    /** OPEN for a caller: on OK, the new queue is created and registered on the event loop, before anyone sees it. */
    private final class OpenDecoder implements ResultDecoder<OpenResult> {
        private final String name;
        private final OpenOptions options;
        private final ClientConnection conn;

        OpenDecoder(String name, OpenOptions options, ClientConnection conn) {
            this.name = name;
            this.options = options;
            this.conn = conn;
        }

        @Override
        public OpenResult ok(long txn, ByteBuf payload) {
            ResultDecoders.Opened o = ResultDecoders.OPENED.ok(txn, payload);
            if ((o.flags() & QueueFlags.DAMAGED) != 0 && damagedWarned.add(name)) {
                // One server is one copy: the caller reads it (OpenResult.damaged() tells), but never
                // silently. Once per queue and client: readers re-open often.
                LOG.warn("ALARM: queue {} on {} is DAMAGED (journal records of it lost at the server's recovery):"
                        + " it may lack acknowledged messages or hold deleted ones", name, where(config));
            }
            QueueHandle q = new QueueHandle(KvsClient.this, name, options, conn, o.handle(), o.store());
            openQueues.add(q);
            if (closed) {
                q.fail(Status.CONNECTION_LOST, "client closed");
                openQueues.remove(q);
            }
            return new OpenResult(Status.OK, null, q, txn, o.epoch(), o.size(), o.flags(), o.lastSeq(), o.digest(), o.store());
        }

        @Override
        public OpenResult failed(Status status, long txn, String reason) {
            return new OpenResult(status, reason, null, txn, 0, 0);
        }
    }
}
