package org.jameskvs.replication;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.StoredMessage;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * What every real-server replication rig has, whatever runs its servers: the real adapter
 * ({@link ReplicatedQueueOpener}) whose state-machine events are recorded with the time they were
 * seen, so that a test waits for the event it needs instead of sleeping, and a plain client that
 * reads one node's copy of a queue around the adapter.
 */
abstract class ClusterRig implements AutoCloseable {
    static final String PASSWORD = "secret";

    final List<String> events = new CopyOnWriteArrayList<>();
    /** {@code System.nanoTime()} at which each event was seen, same index as {@link #events}. */
    private final List<Long> eventNanos = new CopyOnWriteArrayList<>();
    ReplicationConfig config;
    ReplicatedQueueOpener opener;

    /** Starts the adapter on {@code nodes} (tuned by {@code tune}) and waits until it reaches all of them. */
    protected final void startOpener(List<ReplicationConfig.NodeSpec> nodes, UnaryOperator<ReplicationConfig> tune)
            throws InterruptedException {
        config = tune.apply(ReplicationConfig.of(nodes, "james", PASSWORD));
        startAdapter();
    }

    /** The adapter stops and a new one starts on the same configuration (James restarted); its events follow in {@link #events}. */
    void restartOpener() throws InterruptedException {
        restartOpener(config.nodes().size());
    }

    /** {@link #restartOpener()} while some nodes are down: waits until it reaches {@code reachable} of them. */
    void restartOpener(int reachable) throws InterruptedException {
        opener.close();
        startAdapter(reachable);
    }

    private void startAdapter() throws InterruptedException {
        startAdapter(config.nodes().size());
    }

    private void startAdapter(int reachable) throws InterruptedException {
        opener = ReplicatedQueueOpener.start(config);
        opener.listen(e -> {
            synchronized (events) { // the time first: an index in events always has its time
                eventNanos.add(System.nanoTime());
                events.add(e);
            }
        });
        if (!opener.awaitConnected(reachable, Duration.ofSeconds(60))) {
            close();
            throw new AssertionError("the adapter did not connect to " + reachable + " nodes");
        }
    }

    /** The node's own protocol port (no proxy): for a plain client that goes around the adapter. */
    abstract int serverPort(String node);

    /** Opens a queue for writing, retrying while connections and heartbeats come up (bounded). */
    KvsQueue openWriter(String queue, String owner) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 300; i++) {
            r = opener.open(queue, OpenOptions.writer(owner, 1)).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("open failed: " + r.status() + " " + r.reason());
    }

    /** Waits (bounded) for an event line matching {@code what}, seen since event index {@code from}. */
    String awaitEvent(int from, Predicate<String> what, Duration max, String description) throws InterruptedException {
        return events.get(awaitEventIndex(from, what, max, description));
    }

    /** Like {@link #awaitEvent}, giving the event's index (for {@link #eventNanos(int)}). */
    int awaitEventIndex(int from, Predicate<String> what, Duration max, String description) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            for (int i = from; i < events.size(); i++) {
                if (what.test(events.get(i))) {
                    return i;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no event '" + description + "' within " + max.toMillis() + " ms; events:\n  "
                        + String.join("\n  ", events));
            }
            Thread.sleep(20);
        }
    }

    /** When the event at {@code index} was seen ({@code System.nanoTime()}). */
    long eventNanos(int index) {
        return eventNanos.get(index);
    }

    /** Events since index {@code from} that match. */
    List<String> eventsMatching(int from, Predicate<String> what) {
        List<String> out = new ArrayList<>();
        for (int i = from; i < events.size(); i++) {
            if (what.test(events.get(i))) {
                out.add(events.get(i));
            }
        }
        return out;
    }

    /** Waits (bounded) until the queue has exactly two SYNC copies and no rebuild; returns their nodes. */
    List<String> awaitTwoSyncCopies(String queue, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            ManagementTable t = opener.managementTable();
            List<String> sync = t.rows().stream().filter(r -> r.queue().equals(queue) && r.sync() == SyncState.SYNC)
                    .map(ManagementTable.Row::node).toList();
            boolean rebuilding = t.rows().stream().anyMatch(r -> r.queue().equals(queue) && r.sync() == SyncState.REBUILDING);
            if (sync.size() == 2 && !rebuilding) {
                return sync;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not two SYNC copies of " + queue + " within " + max.toMillis() + " ms:\n"
                        + t.format() + "events:\n  " + String.join("\n  ", events));
            }
            Thread.sleep(50);
        }
    }

    /** Whether the node has a queue of that name (it answers a plain read-only OPEN with OK). */
    boolean hasQueue(String node, String queue) {
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(serverPort(node))
                .credentials("james", PASSWORD).build())) {
            return c.open(queue, OpenOptions.reader()).join().isOk();
        }
    }

    /**
     * The ids of one node's copy of a queue in position order (the replication's own record left
     * out), read block-wise with a plain client straight from the server.
     */
    List<String> readCopy(String node, String queue) {
        return new ArrayList<>(positionsOnCopy(serverPort(node), node, queue).keySet());
    }

    /** Waits (at most 30 s, else fails) until the node's copy of the queue holds {@code id}. */
    void awaitOnCopy(String node, String queue, String id) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (!readCopy(node, queue).contains(id)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(id + " never reached " + node);
            }
            Thread.sleep(20);
        }
    }

    /** {@link #readCopy(String, String)} of the node on that port (password {@link #PASSWORD}). */
    static List<String> readCopy(int port, String node, String queue) {
        return new ArrayList<>(positionsOnCopy(port, node, queue).keySet());
    }

    /** {@link #positionsOnCopy(int, String, String)} of a node of this cluster. */
    java.util.LinkedHashMap<String, Long> positionsOnCopy(String node, String queue) {
        return positionsOnCopy(serverPort(node), node, queue);
    }

    /**
     * The ids of one node's copy of a queue with their positions, in position order (the
     * replication's own record left out), read block-wise with a plain client straight from the server,
     * whatever the queue's commit point (flag 0x0010).
     */
    static java.util.LinkedHashMap<String, Long> positionsOnCopy(int port, String node, String queue) {
        java.util.LinkedHashMap<String, Long> ids = new java.util.LinkedHashMap<>();
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(port)
                .credentials("james", PASSWORD).requestTimeout(Duration.ofSeconds(60)).build())) {
            KvsQueue q = c.open(queue, OpenOptions.reader()).join().orThrow();
            long from = 0;
            while (true) {
                ReadResult rr = q.readUncommitted(from, 1000, 8 << 20, 0).join(); // the copy as it is
                if (!rr.isOk()) {
                    throw new AssertionError("READ of " + queue + " on " + node + ": " + rr.status() + " " + rr.reason());
                }
                if (rr.messages().isEmpty()) {
                    return ids;
                }
                for (StoredMessage m : rr.messages()) {
                    if (!Ids.isReserved(m.id())) {
                        ids.put(new String(m.id(), StandardCharsets.UTF_8), m.position());
                    }
                }
                from = rr.nextPosition();
            }
        }
    }

    /** Every id a reader sees through the adapter from position 0, block by block, in one position space (bounded). */
    static List<String> readAll(KvsQueue q) throws Exception {
        return readIds(from -> q.read(from, 1000, 8 << 20, 0), true);
    }

    /**
     * Every id that {@code block} (a READ from a position) returns from position 0 on, block by
     * block, bounded to 100,000 blocks; with {@code samePositionSpace}, a change of the copy serving
     * reads during the scan fails it.
     */
    static List<String> readIds(LongFunction<CompletableFuture<ReadResult>> block, boolean samePositionSpace) throws Exception {
        List<String> ids = new ArrayList<>();
        long from = 0;
        Integer space = null;
        for (int n = 0; n < 100_000; n++) {
            ReadResult rr = block.apply(from).get(60, TimeUnit.SECONDS);
            if (!rr.isOk()) {
                throw new AssertionError("READ: " + rr.status() + " " + rr.reason());
            }
            if (space == null) {
                space = rr.positionSpace();
            }
            if (samePositionSpace && rr.positionSpace() != space) {
                throw new AssertionError("the copy serving reads changed during the scan");
            }
            if (rr.messages().isEmpty()) {
                return ids;
            }
            for (StoredMessage m : rr.messages()) {
                ids.add(new String(m.id(), StandardCharsets.UTF_8));
            }
            from = rr.nextPosition();
        }
        throw new AssertionError("no end of the queue after 100,000 blocks");
    }

    /** Stops the servers (the adapter is closed first). */
    protected abstract void stopServers();

    @Override
    public void close() {
        if (opener != null) {
            opener.close();
        }
        stopServers();
    }
}
