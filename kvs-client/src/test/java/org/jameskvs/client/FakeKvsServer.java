package org.jameskvs.client;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.jameskvs.protocol.FrameDecoder;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.OversizedFrame;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.Wire;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory KVS server for the client's tests: speaks the wire protocol, answers in order and
 * in blocks (one flush per socket read, like the real server), and has knobs to misbehave. All its
 * state lives on its single event loop thread; tests read only the atomics and concurrent logs.
 */
final class FakeKvsServer implements AutoCloseable {
    record Received(Opcode opcode, long sequence, int handle) {
    }

    record Opened(String queue, OpenMode mode, long epoch, String owner, int handle) {
    }

    private static final class Msg {
        long position;
        byte[] id;
        int priority;
        long notBefore;
        byte[] state;
        byte[] body;
    }

    private static final class Queue {
        final TreeMap<Long, Msg> byPosition = new TreeMap<>();
        final Map<String, Msg> byId = new HashMap<>();
        long nextPosition = 1;
        long txn;
        long epoch;
        String owner = "";
        /** The fake's own (seq, digest): any value a real server could send; REBASE sets them. */
        long lastSeq = 7;
        long digest = 0x0123_4567_89AB_CDEFL;
    }

    private final String user;
    private final String password;
    private final SslContext ssl;
    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final ChannelGroup clients = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final Channel serverChannel;
    private final Map<String, Queue> queues = new LinkedHashMap<>();
    private int nextHandle = 1;

    /** The queue flags OPEN and STAT answers carry (followed by the queue's last seq and digest). */
    volatile int queueFlags;
    /** The store id OPEN and STAT answers end with (a real server's {@code store.id}); change it to play a wiped disk. */
    volatile long store = 0x5107e;
    /** When set, requests are recorded but never answered. */
    volatile boolean silent;
    final AtomicInteger received = new AtomicInteger();
    /** This many write-mode OPENs are answered QUEUE_LOCKED (an old connection not yet noticed gone). */
    final AtomicInteger lockedOpens = new AtomicInteger();
    final AtomicInteger maxFramesPerRead = new AtomicInteger();
    final AtomicInteger connections = new AtomicInteger();
    final ConcurrentLinkedQueue<Received> log = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Opened> opens = new ConcurrentLinkedQueue<>();

    FakeKvsServer(String user, String password) throws InterruptedException {
        this(user, password, null);
    }

    FakeKvsServer(String user, String password, SslContext ssl) throws InterruptedException {
        this.user = user;
        this.password = password;
        this.ssl = ssl;
        this.serverChannel = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        clients.add(ch);
                        connections.incrementAndGet();
                        ch.pipeline().addLast(new ReadGate());
                        if (ssl != null) {
                            ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(FrameDecoder.forRequests(64 << 20), new Session());
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
    }

    int port() {
        return ((java.net.InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    KvsClientConfig.Builder config() {
        return KvsClientConfig.builder().host("127.0.0.1").port(port()).credentials(user, password);
    }

    long count(Opcode op) {
        return log.stream().filter(r -> r.opcode == op).count();
    }

    /**
     * From now on reads each client connection's bytes only one socket read (at most 64 KiB) every
     * {@code periodMillis}: a slow link or a busy server. 0: never again (a frozen server whose
     * socket buffers fill and stay full).
     */
    void readSlowly(long periodMillis) {
        clients.forEach(ch -> ch.eventLoop().execute(() -> {
            ReadGate gate = ch.pipeline().get(ReadGate.class);
            gate.closed = true; // the frame decoder's own read requests stop here
            ch.config().setAutoRead(false);
            if (periodMillis > 0) {
                ch.eventLoop().scheduleAtFixedRate(gate::readOnce, periodMillis, periodMillis,
                        java.util.concurrent.TimeUnit.MILLISECONDS);
            }
        }));
    }

    /** Next to the socket: passes read requests on unless closed; {@link #readOnce} passes one. */
    private static final class ReadGate extends io.netty.channel.ChannelOutboundHandlerAdapter {
        private ChannelHandlerContext ctx;
        private volatile boolean closed;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void read(ChannelHandlerContext ctx) {
            if (!closed) {
                ctx.read();
            }
        }

        void readOnce() {
            ctx.read();
        }
    }

    /** Closes every client connection (the listening socket stays). */
    void disconnectAll() {
        clients.close().awaitUninterruptibly();
    }

    @Override
    public void close() {
        serverChannel.close().awaitUninterruptibly();
        clients.close().awaitUninterruptibly();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).awaitUninterruptibly();
    }

    private final class Session extends ChannelInboundHandlerAdapter {
        private boolean authenticated;
        private final Map<Integer, String> handles = new HashMap<>();
        private int framesThisRead;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof OversizedFrame o) {
                ByteBuf out = ctx.alloc().buffer();
                Frames.writeError(out, o.opcode(), Status.FRAME_TOO_LARGE, o.sequence(), 0, null);
                ctx.write(out);
                return;
            }
            ByteBuf frame = (ByteBuf) msg;
            try {
                framesThisRead++;
                received.incrementAndGet();
                Opcode op = Opcode.fromCode(Frames.requestOpcode(frame));
                long seq = Frames.requestSequence(frame);
                int handle = Frames.requestHandle(frame);
                log.add(new Received(op, seq, handle));
                if (silent) {
                    return;
                }
                Frames.skipRequestHeader(frame);
                ByteBuf out = ctx.alloc().buffer();
                answer(op, seq, handle, frame, out);
                ctx.write(out);
            } finally {
                frame.release();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            maxFramesPerRead.accumulateAndGet(framesThisRead, Math::max);
            framesThisRead = 0;
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        private void answer(Opcode op, long seq, int handle, ByteBuf in, ByteBuf out) {
            byte code = op.code();
            if (op == Opcode.AUTH) {
                String u = Wire.readString(in);
                String p = Wire.readString(in);
                authenticated = u.equals(user) && p.equals(password);
                if (authenticated) {
                    ok(out, code, seq, 0);
                } else {
                    Frames.writeError(out, code, Status.AUTH_FAILED, seq, 0, "bad user or password");
                }
                return;
            }
            if (!authenticated) {
                Frames.writeError(out, code, Status.AUTH_REQUIRED, seq, 0, null);
                return;
            }
            switch (op) {
                case PING -> {
                    int start = Frames.beginResponse(out, code, Status.OK, seq, 0);
                    out.writeLong(System.currentTimeMillis());
                    Frames.finishFrame(out, start);
                }
                case LIST -> {
                    int start = Frames.beginResponse(out, code, Status.OK, seq, 0);
                    out.writeInt(queues.size());
                    queues.forEach((name, q) -> {
                        Wire.writeString(out, name);
                        out.writeLong(q.byId.size());
                        out.writeLong(q.txn);
                    });
                    Frames.finishFrame(out, start);
                }
                case OPEN -> {
                    String name = Wire.readString(in);
                    OpenMode mode = OpenMode.fromCode(Wire.readUnsignedByte(in));
                    long epoch = Wire.readLong(in);
                    Wire.readLong(in);
                    Wire.readLong(in);
                    String owner = Wire.readString(in);
                    long expectedStore = in.isReadable() ? Wire.readLong(in) : 0;
                    if (expectedStore != 0 && expectedStore != store) {
                        Frames.writeError(out, code, Status.STORE_CHANGED, seq, 0, "store " + store);
                        return;
                    }
                    Queue q = queues.computeIfAbsent(name, n -> new Queue());
                    if (mode == OpenMode.WRITE) {
                        if (lockedOpens.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                            Frames.writeError(out, code, Status.QUEUE_LOCKED, seq, q.txn, "held by another connection");
                            return;
                        }
                        if (epoch < q.epoch) {
                            Frames.writeError(out, code, Status.STALE_EPOCH, seq, q.txn, "epoch " + q.epoch + " owns it");
                            return;
                        }
                        q.epoch = Math.max(q.epoch, epoch);
                        q.owner = owner;
                    }
                    int h = nextHandle++;
                    handles.put(h, name);
                    opens.add(new Opened(name, mode, epoch, owner, h));
                    int start = Frames.beginResponse(out, code, Status.OK, seq, q.txn);
                    out.writeInt(h);
                    out.writeLong(q.epoch);
                    out.writeLong(q.byId.size());
                    writeQueueFlags(out, q);
                    Frames.finishFrame(out, start);
                }
                default -> queueOp(op, seq, handle, in, out);
            }
        }

        private void queueOp(Opcode op, long seq, int handle, ByteBuf in, ByteBuf out) {
            byte code = op.code();
            String name = handles.get(handle);
            Queue q = name == null ? null : queues.get(name);
            if (q == null) {
                Frames.writeError(out, code, Status.BAD_HANDLE, seq, 0, "handle " + handle);
                return;
            }
            switch (op) {
                case PUT -> {
                    Msg m = new Msg();
                    m.id = Wire.readId(in);
                    m.priority = Wire.readUnsignedByte(in);
                    m.notBefore = Wire.readLong(in);
                    m.state = Wire.readBlob(in);
                    m.body = Wire.readTail(in);
                    String key = new String(m.id, StandardCharsets.ISO_8859_1);
                    if (q.byId.containsKey(key)) {
                        Frames.writeError(out, code, Status.DUPLICATE_ID, seq, q.txn, null);
                        return;
                    }
                    m.position = q.nextPosition++;
                    q.byId.put(key, m);
                    q.byPosition.put(m.position, m);
                    int start = Frames.beginResponse(out, code, Status.OK, seq, ++q.txn);
                    out.writeLong(m.position);
                    Frames.finishFrame(out, start);
                }
                case DELETE, GET, REPLACE -> {
                    String key = new String(Wire.readId(in), StandardCharsets.ISO_8859_1);
                    Msg m = q.byId.get(key);
                    if (m == null) {
                        Frames.writeError(out, code, Status.NOT_FOUND, seq, q.txn, "no message " + key);
                        return;
                    }
                    if (op == Opcode.GET) {
                        int start = Frames.beginResponse(out, code, Status.OK, seq, q.txn);
                        write(out, m);
                        Frames.finishFrame(out, start);
                        return;
                    }
                    if (op == Opcode.DELETE) {
                        q.byId.remove(key);
                        q.byPosition.remove(m.position);
                    } else {
                        m.priority = Wire.readUnsignedByte(in);
                        m.notBefore = Wire.readLong(in);
                        m.state = Wire.readBlob(in);
                    }
                    ok(out, code, seq, ++q.txn);
                }
                case READ -> {
                    long from = Wire.readLong(in);
                    int maxCount = Wire.readInt(in);
                    int maxBytes = Wire.readInt(in);
                    long readyBefore = Wire.readLong(in);
                    List<Msg> picked = new java.util.ArrayList<>();
                    long next = from;
                    int bytes = 0;
                    for (Msg m : q.byPosition.tailMap(from, true).values()) {
                        if (picked.size() >= maxCount || (bytes > maxBytes && !picked.isEmpty())) {
                            break;
                        }
                        next = m.position + 1;
                        if (readyBefore != 0 && m.notBefore > readyBefore) {
                            continue;
                        }
                        picked.add(m);
                        bytes += m.body.length;
                    }
                    int start = Frames.beginResponse(out, code, Status.OK, seq, q.txn);
                    out.writeLong(next);
                    out.writeInt(picked.size());
                    picked.forEach(m -> write(out, m));
                    Frames.finishFrame(out, start);
                }
                case STAT -> {
                    int start = Frames.beginResponse(out, code, Status.OK, seq, q.txn);
                    out.writeLong(q.byId.size());
                    out.writeLong(q.byId.values().stream().mapToLong(m -> m.body.length).sum());
                    out.writeLong(q.byPosition.isEmpty() ? q.nextPosition : q.byPosition.firstKey());
                    out.writeLong(q.nextPosition);
                    out.writeLong(q.byId.values().stream().mapToLong(m -> m.notBefore).min().orElse(Long.MAX_VALUE));
                    out.writeLong(q.epoch);
                    Wire.writeString(out, q.owner);
                    writeQueueFlags(out, q);
                    Frames.finishFrame(out, start);
                }
                case REBASE -> {
                    q.lastSeq = Wire.readLong(in);
                    q.digest = Wire.readLong(in);
                    ok(out, code, seq, q.txn);
                }
                case CLEAR -> {
                    q.byId.clear();
                    q.byPosition.clear();
                    ok(out, code, seq, ++q.txn);
                }
                case DROP -> {
                    queues.remove(name);
                    handles.remove(handle);
                    ok(out, code, seq, 0);
                }
                case CLOSE -> {
                    handles.remove(handle);
                    ok(out, code, seq, 0);
                }
                default -> Frames.writeError(out, code, Status.UNKNOWN_OPCODE, seq, 0, null);
            }
        }

        private void write(ByteBuf out, Msg m) {
            out.writeLong(m.position);
            Wire.writeId(out, m.id);
            out.writeByte(m.priority);
            out.writeLong(m.notBefore);
            Wire.writeBlob(out, m.state);
            Wire.writeBlob(out, m.body);
        }

        private void writeQueueFlags(ByteBuf out, Queue q) {
            out.writeByte(queueFlags);
            out.writeLong(q.lastSeq);
            out.writeLong(q.digest);
            out.writeLong(store);
        }

        private void ok(ByteBuf out, byte code, long seq, long txn) {
            Frames.finishFrame(out, Frames.beginResponse(out, code, Status.OK, seq, txn));
        }
    }

}
