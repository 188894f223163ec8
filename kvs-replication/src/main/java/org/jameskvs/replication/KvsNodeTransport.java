package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.ClientTls;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * The real network under the state machine: one {@link KvsClient} per node and path (two per node,
 * possibly to different addresses), each queue's latest handle per connection, and answers posted
 * back onto the state machine's thread.
 *
 * <p>A connection that cannot be established yet is retried in the background; meanwhile requests
 * on it are answered CONNECTION_LOST at once, and the heartbeat marks the path NG.
 */
final class KvsNodeTransport implements NodeTransport, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvsNodeTransport.class);

    private final ReplicationConfig config;
    private final io.netty.channel.EventLoop coreThread;
    private final Consumer<NodeResponse> sink;
    /** Per node, its paths' clients indexed by {@link NodePath#ordinal()}. */
    private final Map<String, PathClient[]> clients = new HashMap<>();
    /** Inside {@link #send} (core loop): answers must not re-enter the state machine now. */
    private boolean sending;
    /** Answers queued as tasks and not yet delivered (core loop only): later answers queue behind them. */
    private int queuedAnswers;
    private final ExecutorService connector;
    private volatile boolean closed;

    /** One node path: the client and, per queue, the handles of the latest OPENs (state machine thread only). */
    private final class PathClient {
        final String node;
        final NodePath path;
        final KvsClientConfig clientConfig;
        volatile KvsClient client;
        final Map<String, KvsQueue> writeHandles = new HashMap<>();
        final Map<String, KvsQueue> readHandles = new HashMap<>();
        /** The connection's progress stamps as last reported (state machine thread). */
        long receivedSeen;
        long sentSeen;
        long connectionSeen;

        PathClient(String node, NodePath path, KvsClientConfig clientConfig) {
            this.node = node;
            this.path = path;
            this.clientConfig = clientConfig;
        }

        void connectLoop() {
            long backoff = 100;
            while (!closed && client == null) {
                try {
                    client = KvsClient.connect(clientConfig);
                    LOG.info("replication: connected to {}/{} at {}:{}", node, path, clientConfig.host(), clientConfig.port());
                } catch (RuntimeException e) {
                    LOG.debug("replication: {}/{} not reachable yet: {}", node, path, e.getMessage());
                    try {
                        Thread.sleep(backoff);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    backoff = Math.min(2000, backoff * 2);
                }
            }
        }
    }

    /**
     * @param tls      the TLS settings of every connection (both paths of every node)
     * @param coreLoop the core's event loop: every node connection runs its I/O there, and answers
     *                 are delivered there ({@code sink} runs on it, never inline in a send)
     */
    KvsNodeTransport(ReplicationConfig config, ClientTls tls, io.netty.channel.EventLoop coreLoop,
                     Consumer<NodeResponse> sink) {
        this.config = config;
        this.coreThread = coreLoop;
        this.sink = sink;
        List<PathClient> all = new ArrayList<>();
        for (ReplicationConfig.NodeSpec n : config.nodes()) {
            for (NodePath p : NodePath.values()) {
                KvsClientConfig cc = clientConfig(config, n, p, tls, coreLoop);
                PathClient pc = new PathClient(n.name(), p, cc);
                clients.computeIfAbsent(n.name(), k -> new PathClient[NodePath.values().length])[p.ordinal()] = pc;
                all.add(pc);
            }
        }
        connector = Executors.newFixedThreadPool(all.size(), r -> {
            Thread t = new Thread(r, "kvs-replication-connect");
            t.setDaemon(true);
            return t;
        });
        for (PathClient pc : all) {
            connector.execute(pc::connectLoop);
        }
    }

    /** The client settings of one node path's connection (package-private: a test pins them). */
    static KvsClientConfig clientConfig(ReplicationConfig config, ReplicationConfig.NodeSpec n, NodePath p, ClientTls tls,
                                        io.netty.channel.EventLoopGroup coreLoop) {
        return KvsClientConfig.builder().host(n.host(p)).port(n.port(p))
                .credentials(config.user(), config.password())
                .tls(tls)
                // The state machine times requests out itself (and switches paths); the
                // client's own timeout is only a backstop.
                .requestTimeout(config.requestTimeout().multipliedBy(3))
                .connectTimeout(Duration.ofMillis(Math.max(500, config.heartbeatTimeout().toMillis())))
                .reconnectBackoff(Duration.ofMillis(100), Duration.ofMillis(1000))
                // A node that lost its disk must not get our handles (and their epochs) back
                // by itself: the state machine decides what its new store is (lostDisk). This
                // matters for handles whose first OPEN named no store (a new queue's members, a
                // rebuild target): the client then re-opens only on the store that answered it.
                .reopenOnSameStoreOnly(true)
                .eventLoopGroup(coreLoop)
                .build();
    }

    private PathClient client(String node, NodePath p) {
        PathClient[] paths = clients.get(node);
        return paths == null ? null : paths[p.ordinal()];
    }

    private Iterable<PathClient> allClients() {
        return clients.values().stream().flatMap(java.util.Arrays::stream).toList();
    }

    @Override
    public void send(NodeRequest r) {
        sending = true;
        try {
            sendNow(r);
        } finally {
            sending = false;
        }
    }

    private void sendNow(NodeRequest r) {
        PathClient pc = client(r.node(), r.path());
        KvsClient c = pc == null ? null : pc.client;
        long tok = r.token();
        if (c == null) {
            answer(NodeResponse.failed(tok, Status.CONNECTION_LOST, "not connected"));
            return;
        }
        switch (r.op()) {
            case PING -> c.ping().thenAccept(a -> answer(NodeResponse.of(tok, a.status(), a.txn(), a.value(), a.reason())));
            case OPEN_WRITE, OPEN_READ -> {
                boolean write = r.op() == NodeOp.OPEN_WRITE;
                OpenOptions o = (write ? new OpenOptions(OpenMode.WRITE, r.epoch(), 0, 0, r.owner()) : OpenOptions.reader())
                        .withStore(r.expectedStore());
                c.open(r.queue(), o).thenAccept(res -> coreThread.execute(() -> opened(pc, r, write, res)));
            }
            default -> {
                KvsQueue q = (r.viaReadHandle() ? pc.readHandles : pc.writeHandles).get(r.queue());
                if (q == null) {
                    answer(NodeResponse.failed(tok, Status.CONNECTION_LOST, "no handle on this connection"));
                    return;
                }
                dispatch(q, r);
            }
        }
    }

    private void opened(PathClient pc, NodeRequest r, boolean write, OpenResult res) {
        if (res.isOk()) {
            KvsQueue old = (write ? pc.writeHandles : pc.readHandles).put(r.queue(), res.queue());
            if (old != null && old != res.queue()) {
                old.close(); // fenced by the new one anyway; release the server handle
            }
        }
        sink.accept(new NodeResponse(r.token(), res.status(), res.txn(), 0, res.reason(), res.epoch(), res.size(),
                null, null, null, res.flags(), res.lastSeq(), res.digest(), res.store()));
    }

    private void dispatch(KvsQueue q, NodeRequest r) {
        long tok = r.token();
        if (r.queueSeq() > 0 && r.op().isMutation()) {
            Opcode kind = switch (r.op()) {
                case PUT, PUT_REPLACING -> Opcode.PUT;
                case DELETE -> Opcode.DELETE;
                case REPLACE -> Opcode.REPLACE;
                default -> Opcode.CLEAR;
            };
            q.sequenced(r.queueSeq(), r.committed(), kind, r.op() == NodeOp.PUT_REPLACING, r.id(), r.priority(),
                    r.notBefore(), r.state(), r.body()).thenAccept(a -> answer(ack(tok, a)));
            return;
        }
        if (r.position() > 0 && (r.op() == NodeOp.PUT || r.op() == NodeOp.PUT_REPLACING)) {
            q.putAt(r.position(), r.op() == NodeOp.PUT_REPLACING, r.id(), r.priority(), r.notBefore(), r.state(), r.body())
                    .thenAccept(a -> answer(ack(tok, a)));
            return;
        }
        switch (r.op()) {
            case PUT -> q.put(r.id(), r.priority(), r.notBefore(), r.state(), r.body()).thenAccept(a -> answer(ack(tok, a)));
            case PUT_REPLACING -> q.putReplacing(r.id(), r.priority(), r.notBefore(), r.state(), r.body())
                    .thenAccept(a -> answer(ack(tok, a)));
            case DELETE -> q.delete(r.id()).thenAccept(a -> answer(ack(tok, a)));
            case REPLACE -> q.replace(r.id(), r.priority(), r.notBefore(), r.state()).thenAccept(a -> answer(ack(tok, a)));
            case CLEAR -> q.clear().thenAccept(a -> answer(ack(tok, a)));
            case COMMIT -> q.commit(r.fromPosition()).thenAccept(a -> answer(ack(tok, a)));
            case REBASE -> q.rebase(r.fromPosition(), r.readyBefore(), r.position()).thenAccept(a -> answer(ack(tok, a)));
            case ALIGN -> q.rebaseIfAt(r.fromPosition(), r.position(), r.readyBefore()).thenAccept(a -> answer(ack(tok, a)));
            case GET -> q.get(r.id()).thenAccept((GetResult g) -> answer(new NodeResponse(tok, g.status(), g.txn(), 0,
                    g.reason(), 0, 0, g, null, null)));
            case READ -> q.read(r.fromPosition(), r.maxCount(), r.maxBytes(), r.readyBefore()).thenAccept((ReadResult rr) ->
                    answer(new NodeResponse(tok, rr.status(), rr.txn(), 0, rr.reason(), 0, 0, null, rr, null)));
            case READ_UNCOMMITTED -> q.readUncommitted(r.fromPosition(), r.maxCount(), r.maxBytes(), r.readyBefore())
                    .thenAccept((ReadResult rr) ->
                            answer(new NodeResponse(tok, rr.status(), rr.txn(), 0, rr.reason(), 0, 0, null, rr, null)));
            case STAT -> q.stat().thenAccept((QueueStat st) -> answer(new NodeResponse(tok, st.status(), st.txn(), 0,
                    st.reason(), 0, 0, null, null, st)));
            default -> answer(NodeResponse.failed(tok, Status.BAD_REQUEST, "unsupported " + r.op()));
        }
    }

    private static NodeResponse ack(long token, Ack a) {
        return NodeResponse.of(token, a.status(), a.txn(), a.value(), a.reason());
    }

    /**
     * A node's answer, usually on the core loop itself (the connections run their I/O there): then
     * straight into the state machine, without a task per answer. It is queued as a task instead
     * when we are inside {@link #send} (a client call that failed at once: the state machine is not
     * re-entrant), and behind any answer queued so, because the state machine relies on a path's
     * answers arriving in request order.
     */
    private void answer(NodeResponse r) {
        if (!coreThread.inEventLoop()) {
            coreThread.execute(() -> answer(r));
        } else if (sending || queuedAnswers > 0) {
            queuedAnswers++;
            coreThread.execute(() -> {
                queuedAnswers--;
                sink.accept(r);
            });
        } else {
            sink.accept(r);
        }
    }

    /** What {@link #reportProgress} tells of a path whose connection moved bytes. */
    interface ProgressSink {
        /** @param sending the node drained bytes of a request still being sent (else: bytes arrived) */
        void progressed(String node, NodePath path, boolean sending);
    }

    /**
     * Tells {@code sink} of every path whose connection moved bytes since the last call (state
     * machine thread, before each tick): bytes of an answer arrived, or the node drained bytes of a
     * frame still being sent. The heartbeat's PING and every answer on a path wait behind a large
     * frame on it (a mail near the 64 MiB limit takes seconds on a busy machine); a node that keeps
     * reading or sending that frame is not silent.
     */
    void reportProgress(ProgressSink sink) {
        for (PathClient pc : allClients()) {
            KvsClient c = pc.client;
            if (c == null) {
                continue;
            }
            long received = c.lastResponseNanos();
            long sent = c.lastSendProgressNanos();
            long connection = c.connectionNumber();
            if (connection != pc.connectionSeen) {
                // A reconnect (maybe to a restarted, emptied server): its handshake is no proof that
                // the path lived on; the heartbeat's PINGs decide, as for a node that was down.
                pc.connectionSeen = connection;
                pc.receivedSeen = received;
                pc.sentSeen = sent;
                continue;
            }
            boolean sending = sent != pc.sentSeen;
            if (sending || received != pc.receivedSeen) {
                pc.receivedSeen = received;
                pc.sentSeen = sent;
                sink.progressed(pc.node, pc.path, sending);
            }
        }
    }

    /**
     * Releases handles of one queue (state machine thread): its write handles (the writer closed
     * it) and/or its read handles (shared by the writer's probes and the read-only readers).
     */
    void closeQueue(String queue, boolean writeHandles, boolean readHandlesToo) {
        for (PathClient pc : allClients()) {
            KvsQueue w = writeHandles ? pc.writeHandles.remove(queue) : null;
            if (w != null) {
                w.close();
            }
            KvsQueue r = readHandlesToo ? pc.readHandles.remove(queue) : null;
            if (r != null) {
                r.close();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        connector.shutdownNow();
        for (PathClient pc : allClients()) {
            KvsClient c = pc.client;
            if (c != null) {
                c.close();
            }
        }
    }

    /** For tests: whether every path has a connection. */
    boolean allConnected() {
        return clients.values().stream().flatMap(java.util.Arrays::stream).allMatch(pc -> pc.client != null && pc.client.isConnected());
    }

    /**
     * LIST on the active path of every connected node, merged by name (each queue lives on two
     * nodes; the larger size is kept). Fails with CONNECTION_LOST only when no node answered.
     */
    java.util.concurrent.CompletableFuture<org.jameskvs.client.ListResult> listQueues() {
        java.util.List<java.util.concurrent.CompletableFuture<org.jameskvs.client.ListResult>> parts = new java.util.ArrayList<>();
        for (PathClient pc : allClients()) {
            KvsClient c = pc.client;
            if (pc.path == NodePath.ACTIVE && c != null) {
                parts.add(c.listQueues());
            }
        }
        return java.util.concurrent.CompletableFuture.allOf(parts.toArray(new java.util.concurrent.CompletableFuture[0]))
                .thenApply(v -> {
                    java.util.Map<String, org.jameskvs.client.QueueInfo> merged = new java.util.TreeMap<>();
                    boolean any = false;
                    for (var f : parts) {
                        org.jameskvs.client.ListResult r = f.join();
                        if (!r.isOk()) {
                            continue;
                        }
                        any = true;
                        for (org.jameskvs.client.QueueInfo q : r.queues()) {
                            merged.merge(q.name(), q, (a, b) -> a.size() >= b.size() ? a : b);
                        }
                    }
                    return any ? new org.jameskvs.client.ListResult(Status.OK, null, java.util.List.copyOf(merged.values()))
                            : new org.jameskvs.client.ListResult(Status.CONNECTION_LOST, "no node answered LIST", java.util.List.of());
                });
    }

    /** Nodes whose active path is connected and authenticated right now. */
    int connectedNodes() {
        int n = 0;
        for (PathClient pc : allClients()) {
            KvsClient c = pc.client;
            if (pc.path == NodePath.ACTIVE && c != null && c.isConnected()) {
                n++;
            }
        }
        return n;
    }
}
