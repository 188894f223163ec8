package org.jameskvs.replication;

import org.jameskvs.protocol.Status;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * A deterministic discrete-event world: virtual time, KVS servers ({@link SimNode}: the real one,
 * {@link RealNode}, or the model, {@link SimServer}), James clients (each a {@link ReplicationCore})
 * and the network between them. One TCP connection per (client, node, path) link: FIFO both ways,
 * random delay (so links reorder against each other); faults: a cut link (silence: requests and
 * answers held, then delivered in order if it heals before TCP gives up, else the connection is
 * broken), answers held on a path while its requests are applied, a broken connection (in-flight
 * requests answer CONNECTION_LOST, handles are gone), a duplicated frame of a sequenced mutation
 * (the server must answer the repeat from the stored outcome), a paused node (SIGSTOP: nothing
 * processed until resumed, then in arrival order), a crashed node (connections refused; restart
 * with or without its data). The replication layer has no
 * node-to-node traffic (copies go through the writer), so a node&lt;-&gt;node partition changes nothing
 * and is not modelled.
 */
final class SimWorld {
    final Random rnd;
    long now;
    private long seq;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    final Map<String, SimNode> servers = new LinkedHashMap<>();
    final Map<String, Boolean> paused = new HashMap<>();
    final Map<String, Boolean> crashed = new HashMap<>();
    private final Map<String, ArrayDeque<Runnable>> pausedWork = new HashMap<>();
    private final Map<String, Link> links = new HashMap<>();
    private long nextConn = 1;
    long minDelayNanos = 200_000;
    long maxDelayNanos = 3_000_000;
    double breakProbability = 0.0005;
    long tcpGiveUpNanos = 3_000_000_000L;
    long delivered;
    /** Chance that a sequenced mutation's frame is delivered twice (0: never; drawn only when positive). */
    double duplicateProbability;
    long duplicates;
    static final String DEBUG = System.getProperty("sim.debugNode");
    /** When set, every request a server applied and its answer, in order (replay tests compare two runs). */
    List<String> trace;
    /**
     * When set, the next request sent to a node that it matches is lost on the way (then cleared):
     * never applied, never answered, the connection stays up and the requests after it arrive. A
     * TCP stream does not lose one frame, but a server that fails a sequenced mutation without
     * taking its seq leaves the same gap for the ones behind it (tests of SEQ_GAP).
     */
    java.util.function.Predicate<NodeRequest> dropOnce;
    /**
     * When set, shown each request about to be sent (before anything else happens to it) until it
     * answers true, then cleared: a test changes the world at an exact step with it (a node wiped
     * between an open's probe and its fence).
     */
    java.util.function.Predicate<NodeRequest> beforeSendOnce;
    /** The requests {@link #dropOnce} lost. */
    final List<NodeRequest> droppedRequests = new ArrayList<>();

    private record Event(long at, long seq, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
        }
    }

    final class Link {
        final String client;
        final String node;
        final NodePath path;
        long conn;
        boolean cut;
        /** Requests get through and are applied; their answers are held (never delivered while set). */
        boolean holdAnswers;
        long lastToServer;
        long lastToClient;
        final Map<String, Integer> writeHandles = new HashMap<>();
        final Map<String, Integer> readHandles = new HashMap<>();
        final Map<Long, NodeRequest> inflight = new LinkedHashMap<>();
        /** Bytes held by a cut, with the order they were sent in (TCP delivers them in that order). */
        final java.util.TreeMap<Long, Runnable> held = new java.util.TreeMap<>();
        long sendSeq;
        long answerSeq = 1L << 40;
        long cutSince;
        long holdSince;
        ReplicationCore core;

        Link(String client, String node, NodePath path) {
            this.client = client;
            this.node = node;
            this.path = path;
        }
    }

    SimWorld(long seed, List<String> nodes) {
        this(seed, nodes, SimServer::new);
    }

    /** @param nodeFactory makes each node's server: the model ({@link SimServer}) or the real one ({@link RealNode}) */
    SimWorld(long seed, List<String> nodes, java.util.function.Function<String, SimNode> nodeFactory) {
        this.rnd = new Random(seed);
        for (String n : nodes) {
            servers.put(n, nodeFactory.apply(n));
            paused.put(n, false);
            crashed.put(n, false);
            pausedWork.put(n, new ArrayDeque<>());
        }
    }

    /** The model server of a node (tests that inject model-only faults or read its counters). */
    SimServer model(String node) {
        return (SimServer) servers.get(node);
    }

    /** Frees the nodes' files. */
    void dispose() {
        for (SimNode n : servers.values()) {
            n.dispose();
        }
    }

    Clock clock() {
        return () -> now;
    }

    void at(long time, Runnable r) {
        events.add(new Event(Math.max(time, now), seq++, r));
    }

    void after(long delayNanos, Runnable r) {
        at(now + delayNanos, r);
    }

    /** Runs events until the given virtual time. */
    void runUntil(long time) {
        while (!events.isEmpty() && events.peek().at <= time) {
            if (events.size() > 2_000_000) {
                throw new IllegalStateException("event storm: " + events.size() + " events pending at " + now / 1e9 + " s");
            }
            Event e = events.poll();
            now = e.at;
            e.action.run();
        }
        now = Math.max(now, time);
    }

    /** A transport for one client; the core must be attached with {@link #attach}. */
    NodeTransport transport(String client) {
        return r -> send(client, r);
    }

    void attach(String client, ReplicationCore core) {
        for (String n : servers.keySet()) {
            for (NodePath p : NodePath.values()) {
                link(client, n, p).core = core;
            }
        }
    }

    Link link(String client, String node, NodePath path) {
        return links.computeIfAbsent(client + "|" + node + "|" + path, k -> {
            Link l = new Link(client, node, path);
            l.conn = nextConn++;
            servers.get(node).connectionOpened(l.conn);
            return l;
        });
    }

    private long delay() {
        return minDelayNanos + (long) (rnd.nextDouble() * (maxDelayNanos - minDelayNanos));
    }

    private void send(String client, NodeRequest r) {
        if (beforeSendOnce != null && beforeSendOnce.test(r)) {
            beforeSendOnce = null;
        }
        Link l = link(client, r.node(), r.path());
        if (crashed.get(r.node())) {
            answer(l, NodeResponse.failed(r.token(), Status.CONNECTION_LOST, "connection refused"), l.conn, true);
            return;
        }
        if (rnd.nextDouble() < breakProbability) {
            breakConnection(l);
        }
        int handle = 0;
        if (r.queue() != null && r.op() != NodeOp.OPEN_WRITE && r.op() != NodeOp.OPEN_READ) {
            Integer h = r.viaReadHandle() ? l.readHandles.get(r.queue()) : l.writeHandles.get(r.queue());
            if (h == null) {
                // The connection was re-established since the OPEN: the handle is gone.
                answer(l, NodeResponse.failed(r.token(), Status.CONNECTION_LOST, "handle lost with the connection"),
                        l.conn, true);
                return;
            }
            handle = h;
        }
        l.inflight.put(r.token(), r);
        if (dropOnce != null && dropOnce.test(r)) {
            dropOnce = null;
            droppedRequests.add(r);
            if (trace != null) {
                trace.add(now + " " + client + ">" + r.node() + "/" + r.path() + " " + r + " LOST on the way");
            }
            return;
        }
        long conn = l.conn;
        int h = handle;
        long order = l.sendSeq++;
        if (l.cut) {
            l.held.put(order, () -> arrive(l, conn, h, r, order)); // TCP keeps retransmitting
            return;
        }
        l.lastToServer = Math.max(l.lastToServer, now + delay());
        at(l.lastToServer, () -> arrive(l, conn, h, r, order));
    }

    private void arrive(Link l, long conn, int handle, NodeRequest r, long order) {
        if (conn != l.conn || crashed.get(l.node)) {
            return; // the connection died on the way; its break answered CONNECTION_LOST
        }
        if (l.cut) {
            l.held.put(order, () -> arrive(l, conn, handle, r, order));
            return;
        }
        if (paused.get(l.node)) {
            pausedWork.get(l.node).add(() -> process(l, conn, handle, r));
            return;
        }
        process(l, conn, handle, r);
    }

    private void process(Link l, long conn, int handle, NodeRequest r) {
        if (conn != l.conn || crashed.get(l.node)) {
            return;
        }
        NodeResponse resp = servers.get(l.node).apply(conn, handle, r);
        if (duplicateProbability > 0 && r.queueSeq() > 0 && rnd.nextDouble() < duplicateProbability) {
            // The request frame arrives twice: the server must answer the repeat from the stored
            // outcome and apply nothing; the second answer is dropped on the way back.
            NodeResponse again = servers.get(l.node).apply(conn, handle, r);
            duplicates++;
            if (trace != null) {
                trace.add(now + " duplicate " + r + " -> " + again.status() + " txn=" + again.txn());
            }
        }
        if (trace != null) {
            // With the copy's (seq, digest) after the request: a replay must reproduce the content too.
            SimNode.QueueView after = r.queue() == null ? null : servers.get(l.node).view(r.queue());
            trace.add(now + " " + l.client + ">" + l.node + "/" + l.path + " " + r + " -> " + resp.status() + " txn=" + resp.txn()
                    + (r.op() == NodeOp.PING ? "" : " v=" + resp.value()) + " seq=" + resp.lastSeq() + " d=" + resp.digest()
                    + (after == null ? "" : " copy=" + after.seq() + "/" + after.digest()));
        }
        if (DEBUG != null && DEBUG.equals(l.node)) {
            System.out.printf("%8.3f    [%s] %s %s -> %s txn=%d%n", now / 1e9, l.node, l.client, r, resp.status(), resp.txn());
        }
        if (resp.isOk() && (r.op() == NodeOp.OPEN_WRITE || r.op() == NodeOp.OPEN_READ)) {
            // The client-side handle table is updated when the answer arrives (like KvsClient.open).
            int hid = (int) resp.value();
            NodeResponse clean = new NodeResponse(resp.token(), resp.status(), resp.txn(), 0, null, resp.epoch(),
                    resp.size(), null, null, null, resp.flags(), resp.lastSeq(), resp.digest(), resp.store());
            deliver(l, conn, clean, () -> (r.op() == NodeOp.OPEN_WRITE ? l.writeHandles : l.readHandles).put(r.queue(), hid));
            return;
        }
        deliver(l, conn, resp, null);
    }

    private void deliver(Link l, long conn, NodeResponse resp, Runnable beforeDelivery) {
        deliver(l, conn, resp, beforeDelivery, l.answerSeq++);
    }

    private void deliver(Link l, long conn, NodeResponse resp, Runnable beforeDelivery, long order) {
        if (l.cut || l.holdAnswers) {
            l.held.put(order, () -> deliver(l, conn, resp, beforeDelivery, order));
            return;
        }
        l.lastToClient = Math.max(l.lastToClient, now + delay());
        at(l.lastToClient, () -> {
            if (conn != l.conn) {
                return;
            }
            if (l.cut) {
                l.held.put(order, () -> deliver(l, conn, resp, beforeDelivery, order));
                return;
            }
            l.inflight.remove(resp.token());
            if (beforeDelivery != null) {
                beforeDelivery.run();
            }
            delivered++;
            l.core.onResponse(resp);
        });
    }

    private void answer(Link l, NodeResponse resp, long conn, boolean local) {
        after(local ? 100_000 : delay(), () -> l.core.onResponse(resp));
    }

    /** The TCP connection of a link breaks: in-flight requests answer CONNECTION_LOST, handles are gone. */
    void breakConnection(Link l) {
        servers.get(l.node).connectionClosed(l.conn);
        l.held.clear();
        List<NodeRequest> lost = new ArrayList<>(l.inflight.values());
        l.inflight.clear();
        l.conn = nextConn++;
        l.writeHandles.clear();
        l.readHandles.clear();
        if (!crashed.get(l.node)) {
            servers.get(l.node).connectionOpened(l.conn);
        }
        long at = now + delay();
        for (NodeRequest r : lost) {
            NodeResponse resp = NodeResponse.failed(r.token(), Status.CONNECTION_LOST, "connection lost");
            at(at++, () -> l.core.onResponse(resp)); // the client fails its pending calls in order
        }
    }

    /** From now on the answers on this node's path are lost: requests still arrive and are applied. */
    void holdAnswers(String node, NodePath path) {
        holdAnswers(node, path, true);
    }

    /**
     * Holds (or releases) the answers on this node's path: requests still arrive and are applied.
     * Released within {@link #tcpGiveUpNanos}, the held answers flow in order; later, the
     * connection is found broken (as after a cut).
     */
    void holdAnswers(String node, NodePath path, boolean hold) {
        for (Link l : new ArrayList<>(links.values())) {
            if (!l.node.equals(node) || l.path != path || l.holdAnswers == hold) {
                continue;
            }
            l.holdAnswers = hold;
            if (hold) {
                l.holdSince = now;
                continue;
            }
            if (l.cut) {
                continue; // the cut holds them now; its end sends them
            }
            if (now - l.holdSince > tcpGiveUpNanos) {
                breakConnection(l);
                continue;
            }
            List<Runnable> held = new ArrayList<>(l.held.tailMap(1L << 40).values());
            l.held.tailMap(1L << 40).clear();
            for (Runnable r : held) {
                r.run();
            }
        }
    }

    void cut(String node, NodePath path, boolean cut) {
        for (Link l : new ArrayList<>(links.values())) {
            if (l.node.equals(node) && (path == null || l.path == path)) {
                setCut(l, cut);
            }
        }
    }

    void cutClient(String client, String node, NodePath path, boolean cut) {
        for (Link l : new ArrayList<>(links.values())) {
            if (l.client.equals(client) && l.node.equals(node) && (path == null || l.path == path)) {
                setCut(l, cut);
            }
        }
    }

    /**
     * A cut holds the bytes (TCP retransmits); when it heals within {@link #tcpGiveUpNanos} they
     * flow again in order, after a longer cut the connection is found broken.
     */
    private void setCut(Link l, boolean cut) {
        if (cut == l.cut) {
            return;
        }
        l.cut = cut;
        if (cut) {
            l.cutSince = now;
            return;
        }
        // Answers held on the way back were produced before anything still held on the way in:
        // they go first, then the requests in send order.
        List<Runnable> held = new ArrayList<>(l.held.tailMap(1L << 40).values());
        held.addAll(l.held.headMap(1L << 40).values());
        l.held.clear();
        if (now - l.cutSince > tcpGiveUpNanos) {
            breakConnection(l);
            return;
        }
        for (Runnable r : held) {
            r.run();
        }
    }

    void pause(String node) {
        paused.put(node, true);
        if (DEBUG != null) {
            System.out.printf("%8.3f    pause %s%n", now / 1e9, node);
        }
    }

    void resume(String node) {
        paused.put(node, false);
        if (DEBUG != null) {
            System.out.printf("%8.3f    resume %s%n", now / 1e9, node);
        }
        ArrayDeque<Runnable> work = pausedWork.get(node);
        while (!work.isEmpty()) {
            work.poll().run();
        }
    }

    void crash(String node) {
        crashed.put(node, true);
        paused.put(node, false);
        pausedWork.get(node).clear();
        for (Link l : links.values()) {
            if (l.node.equals(node)) {
                breakConnection(l);
            }
        }
    }

    void restart(String node, boolean keepData) {
        servers.get(node).restart(keepData);
        reconnect(node);
    }

    /** Restarts a crashed node with its data, its store full (PUTs refused) or with room again. */
    void restartStoreFull(String node, boolean storeFull) {
        servers.get(node).restartStoreFull(storeFull);
        reconnect(node);
    }

    private void reconnect(String node) {
        crashed.put(node, false);
        for (Link l : links.values()) {
            if (l.node.equals(node)) {
                l.conn = nextConn++;
                l.writeHandles.clear();
                l.readHandles.clear();
                servers.get(node).connectionOpened(l.conn);
            }
        }
    }
}
