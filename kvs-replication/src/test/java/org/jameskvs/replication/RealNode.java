package org.jameskvs.replication;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jameskvs.client.NodeWireCodec;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.net.EmbeddedServer;
import org.jameskvs.server.storage.QueueState;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The real KVS server in the simulation: its {@code QueueStore} (a Chronicle journal in this node's
 * folder) behind its protocol pipeline ({@link EmbeddedServer}), reached through the client's codec
 * ({@link NodeWireCodec}): a request is encoded as the KvsClient encodes it, applied by the server's
 * dispatcher, committed, and its answer decoded as the client decodes it. No sockets, no threads:
 * each request is applied when the world delivers it.
 *
 * <p>A crash keeps the journal as the page cache holds it (every committed block); the restart
 * replays it. A restart without data starts on an empty folder.
 *
 * <p>Opening and closing a journal costs more than a whole seed's requests, so the servers live in a
 * {@link Pool} across seeds: each seed uses a queue of its own name (what one seed does never
 * depends on another seed's queue), and a node's journal is started afresh once it has grown past
 * {@code sim.resetBytes}, so a restart's replay stays short.
 */
final class RealNode implements SimNode {
    /** Chronicle block size of the simulation's journals: small, so a fresh journal is cheap (records here are tiny). */
    static final long BLOCK_BYTES = Long.getLong("sim.blockBytes", 256 << 10);
    /** A pooled node's journal is started afresh, between seeds, past this size. */
    static final long RESET_BYTES = Long.getLong("sim.resetBytes", 4 << 20);

    /** The servers of one test, one per node name, reused by the worlds it runs one after the other. */
    static final class Pool implements AutoCloseable {
        private final Path folders;
        private final Map<String, Server> servers = new LinkedHashMap<>();

        Pool(Path folders) {
            this.folders = folders;
        }

        private final java.util.Set<String> queuesUsed = new java.util.HashSet<>();

        /**
         * The nodes of a new world whose queue is {@code queue} (nothing of an earlier world is open
         * on them). A queue name used by an earlier world (the same seed again) gets empty journals,
         * so the world starts as it would alone.
         */
        java.util.function.Function<String, SimNode> forQueue(String queue) {
            boolean again = !queuesUsed.add(queue);
            if (again) {
                for (Server s : servers.values()) {
                    s.restart(false);
                }
                queuesUsed.clear();
                queuesUsed.add(queue);
            }
            return this::node;
        }

        private SimNode node(String name) {
            Server s = servers.computeIfAbsent(name, n -> new Server(folders.resolve(n)));
            if (s.store.store().journalBytes() > RESET_BYTES) {
                s.restart(false);
            }
            return new RealNode(name, s);
        }

        @Override
        public void close() {
            for (Server s : servers.values()) {
                s.store.close();
            }
            servers.clear();
        }
    }

    /** One node's server process and its folder. */
    private static final class Server {
        final Path dir;
        EmbeddedServer store;

        Server(Path dir) {
            this.dir = dir;
            emptyFolder(dir);
            store = new EmbeddedServer(dir, BLOCK_BYTES);
        }

        void restart(boolean keepData) {
            store.close();
            if (!keepData) {
                emptyFolder(dir);
            }
            store = new EmbeddedServer(dir, BLOCK_BYTES);
        }

        /** Restarts with its data, its journal limit at what the journal holds now (full) or none. */
        void restartStoreFull(boolean full) {
            long holds = store.store().journalUsedBytes();
            store.close();
            store = new EmbeddedServer(dir, BLOCK_BYTES, full ? Math.max(1, holds) : 0);
        }
    }

    private static final class Conn {
        final EmbeddedServer.Connection wire;
        long nextSeq = 1;

        Conn(EmbeddedServer.Connection wire) {
            this.wire = wire;
        }
    }

    private final String name;
    private final Server server;
    private final Map<Long, Conn> connections = new HashMap<>();
    /** The server's store ids as this world numbers them ({@link #canonicalStore}). */
    private final Map<Long, Long> canonical = new HashMap<>();

    private RealNode(String name, Server server) {
        this.name = name;
        this.server = server;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void connectionOpened(long conn) {
        Conn c = new Conn(server.store.connect());
        ByteBuf auth = Unpooled.buffer();
        long seq = c.nextSeq++;
        NodeWireCodec.auth(auth, seq, EmbeddedServer.USER, EmbeddedServer.PASSWORD);
        ByteBuf answer = c.wire.exchange(auth);
        try {
            ByteBuf frame = NodeWireCodec.nextFrame(answer, seq);
            Status s = frame == null ? null : Frames.responseStatus(frame);
            if (s != Status.OK) {
                throw new IllegalStateException(name + ": AUTH answered " + s);
            }
        } finally {
            answer.release();
        }
        connections.put(conn, c);
    }

    @Override
    public void connectionClosed(long conn) {
        Conn c = connections.remove(conn);
        if (c != null) {
            c.wire.close();
        }
    }

    @Override
    public void restart(boolean keepData) {
        connections.clear(); // the process is gone, and its sockets with it
        server.restart(keepData);
    }

    @Override
    public void restartStoreFull(boolean storeFull) {
        connections.clear();
        server.restartStoreFull(storeFull);
    }

    @Override
    public NodeResponse apply(long conn, int handle, NodeRequest r) {
        Conn c = connections.get(conn);
        if (c == null) {
            throw new IllegalStateException(name + ": request on connection " + conn + ", which is not open");
        }
        ByteBuf request = Unpooled.buffer();
        long seq = c.nextSeq++;
        if (r.expectedStore() != 0) {
            r = NodeRequest.open(r.token(), r.node(), r.path(), r.queue(), r.op() == NodeOp.OPEN_WRITE, r.epoch(),
                    r.owner(), realStore(r.expectedStore()));
        }
        NodeWireCodec.encode(request, seq, handle, r);
        ByteBuf answer = c.wire.exchange(request);
        try {
            ByteBuf frame = NodeWireCodec.nextFrame(answer, seq);
            if (frame == null || answer.isReadable()) {
                throw new IllegalStateException(name + ": " + r + " answered with " + (frame == null ? "no" : "more than one")
                        + " frame");
            }
            return canonicalStore(NodeWireCodec.decode(r, frame));
        } finally {
            answer.release();
        }
    }

    /**
     * The real server draws its store id at random (per data directory): a replay would write other
     * ids into the membership records and so other digests. What the replication does with an id
     * depends only on which answers share it, so this world numbers the ids in the order it meets
     * them: the same numbers in every replay.
     */
    private NodeResponse canonicalStore(NodeResponse a) {
        long real = a.store() != 0 ? a.store() : a.stat() != null ? a.stat().store() : 0;
        if (real == 0) {
            return a;
        }
        long id = canonical.computeIfAbsent(real, k -> (long) (name.hashCode() & 0x7fffffff) << 20 | (canonical.size() + 1));
        return new NodeResponse(a.token(), a.status(), a.txn(), a.value(), a.reason(), a.epoch(), a.size(), a.get(),
                a.read(), a.stat() == null ? null : withStore(a.stat(), id), a.flags(), a.lastSeq(), a.digest(),
                a.store() == 0 ? 0 : id);
    }

    /** The real id this world numbered {@code canonicalId}; an id it never gave matches no store. */
    private long realStore(long canonicalId) {
        for (Map.Entry<Long, Long> e : canonical.entrySet()) {
            if (e.getValue() == canonicalId) {
                return e.getKey();
            }
        }
        return Long.MIN_VALUE;
    }

    private static org.jameskvs.client.QueueStat withStore(org.jameskvs.client.QueueStat s, long id) {
        return new org.jameskvs.client.QueueStat(s.status(), s.reason(), s.txn(), s.size(), s.bytes(), s.firstPosition(),
                s.nextPosition(), s.earliestNotBefore(), s.epoch(), s.owner(), s.flags(), s.lastSeq(), s.digest(), id);
    }

    @Override
    public Probe probe(String queue, String id) {
        QueueState q = server.store.store().queue(queue);
        if (q == null) {
            return null;
        }
        ByteBuf out = Unpooled.buffer();
        try {
            Status s = server.store.store().get(q, id.getBytes(StandardCharsets.UTF_8), out);
            if (s != Status.OK && s != Status.NOT_FOUND) {
                throw new IllegalStateException(name + ": looking up " + id + " for the checker: " + s);
            }
            return new Probe(s == Status.OK, q.epoch());
        } finally {
            out.release();
        }
    }

    @Override
    public QueueView view(String queue) {
        QueueState q = server.store.store().queue(queue);
        if (q == null) {
            return null;
        }
        ByteBuf out = Unpooled.buffer();
        try {
            Status s = server.store.store().read(q, 0, 0, 0, 0, out);
            if (s != Status.OK) {
                throw new IllegalStateException(name + ": reading " + queue + " for the checker: " + s);
            }
            ReadResult r = NodeWireCodec.readPayload(q.txn(), out);
            return new QueueView(q.txn(), q.epoch(), q.lastSeq(), q.digest(), q.damaged(), r.messages());
        } finally {
            out.release();
        }
    }

    /** This world's connections close; the server stays for the next world. */
    @Override
    public void dispose() {
        for (Conn c : new ArrayList<>(connections.values())) {
            c.wire.close();
        }
        connections.clear();
    }

    private static void emptyFolder(Path dir) {
        try {
            if (Files.exists(dir)) {
                try (Stream<Path> all = Files.walk(dir)) {
                    List<Path> paths = all.sorted(Comparator.reverseOrder()).toList();
                    for (Path p : paths) {
                        Files.delete(p);
                    }
                }
            }
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
