package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * Real in-process KVS servers (each with its own journal directory and socket), each path (active,
 * standby) of each node behind its own {@link FreezableProxy}, and the real adapter
 * ({@link ReplicatedQueueOpener}) whose state-machine events are recorded, so that a test waits for
 * the event it needs instead of sleeping.
 */
final class ProxiedCluster implements AutoCloseable {
    static final String PASSWORD = "secret";

    final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private final Map<String, FreezableProxy[]> proxies = new LinkedHashMap<>();
    final List<String> events = new CopyOnWriteArrayList<>();
    final ReplicationConfig config;
    final ReplicatedQueueOpener opener;

    /** {@code nodes} servers named kvs1..kvsN; {@code tune} adjusts the configuration (timings, placement). */
    ProxiedCluster(Path dir, int nodes, UnaryOperator<ReplicationConfig> tune) throws IOException, InterruptedException {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            String name = "kvs" + i;
            KvsServer s = KvsServer.start(ServerConfig.forTest(dir.resolve(name), PASSWORD));
            servers.put(name, s);
            FreezableProxy active = new FreezableProxy(s.port());
            FreezableProxy standby = new FreezableProxy(s.port());
            proxies.put(name, new FreezableProxy[]{active, standby});
            specs.add(new ReplicationConfig.NodeSpec(name, "127.0.0.1", active.port(), "127.0.0.1", standby.port()));
        }
        config = tune.apply(ReplicationConfig.of(specs, "james", PASSWORD));
        opener = ReplicatedQueueOpener.start(config);
        opener.listen(events::add);
        if (!opener.awaitConnected(nodes, Duration.ofSeconds(30))) {
            close();
            throw new AssertionError("the adapter did not connect to " + nodes + " nodes");
        }
    }

    /** Stops (or lets again) all traffic on one path of one node, without closing anything. */
    void freeze(String node, NodePath path, boolean frozen) {
        proxies.get(node)[path.ordinal()].freeze(frozen);
    }

    /** The server's own port (not a proxy): for a plain client that goes around the adapter. */
    int serverPort(String node) {
        return servers.get(node).port();
    }

    /** Opens a queue for writing, retrying while connections and heartbeats come up (bounded). */
    KvsQueue openWriter(String queue, String owner) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
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
        long deadline = System.nanoTime() + max.toNanos();
        while (true) {
            for (int i = from; i < events.size(); i++) {
                if (what.test(events.get(i))) {
                    return events.get(i);
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no event '" + description + "' within " + max.toMillis() + " ms; events:\n  "
                        + String.join("\n  ", events));
            }
            Thread.sleep(20);
        }
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
            if (sync.size() == 2 && !t.format().contains("rebuilding")) {
                return sync;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not two SYNC copies of " + queue + " within " + max.toMillis() + " ms:\n"
                        + t.format() + "events:\n  " + String.join("\n  ", events));
            }
            Thread.sleep(50);
        }
    }

    @Override
    public void close() {
        opener.close();
        proxies.values().forEach(p -> {
            p[0].close();
            p[1].close();
        });
        servers.values().forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // already closed by the test
            }
        });
    }
}
