package org.jameskvs.faults;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.replication.ManagementTable;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;
import org.jameskvs.replication.SyncState;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Three (or more) KVS server processes, the replication config that points at them, and the
 * verification every scenario ends with: after the heal, every acknowledged put that was not
 * deleted must be on the two SYNC copies (read directly from each node with a plain client, in
 * READ blocks) and readable by a new owner that reclaims the queue; no acknowledged delete may
 * come back; no message may be there twice.
 */
public final class FaultCluster implements AutoCloseable {
    public static final String PASSWORD = "faults";
    public static final String USER = "james";

    public final Path dir;
    public final List<NodeProcess> nodes;

    public FaultCluster(Path dir, List<NodeProcess> nodes) {
        this.dir = dir;
        this.nodes = List.copyOf(nodes);
    }

    /** {@code n} nodes kvs1..kvsN on 127.0.0.1; {@code extra} adds server properties per node name. */
    public static FaultCluster local(Path dir, int n, Map<String, List<String>> extra) throws IOException {
        List<NodeProcess> nodes = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            String name = "kvs" + i;
            nodes.add(NodeProcess.local(name, dir.resolve(name),
                    extra.getOrDefault(name, List.of()).toArray(new String[0])));
        }
        return new FaultCluster(dir, nodes);
    }

    /** Starts every node (in parallel: JVM start-up dominates). */
    public FaultCluster start() throws Exception {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (NodeProcess n : nodes) {
            all.add(CompletableFuture.runAsync(() -> {
                try {
                    n.start();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
        return this;
    }

    public NodeProcess node(String name) {
        return nodes.stream().filter(n -> n.name.equals(name)).findFirst().orElseThrow();
    }

    /**
     * The replication config: short timings (heartbeat 200 ms, path NG after 600 ms, request
     * timeout 1 s, lease 300 ms / 1.5 s), and the queue placed on the first two nodes (the others are
     * spares for a replacement copy).
     */
    public ReplicationConfig config(String queue) {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (NodeProcess n : nodes) {
            specs.add(new ReplicationConfig.NodeSpec(n.name, n.host, n.port, n.standbyHost, n.port));
        }
        return ReplicationConfig.of(specs, USER, PASSWORD)
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(600), Duration.ofMillis(1000))
                .withCopyBlock(500, 4 << 20)
                .withLease(Duration.ofMillis(300), Duration.ofMillis(1500))
                .withPlacement(ReplicationConfig.PlacementRule.FIRST_TWO,
                        Map.of(queue, List.of(nodes.get(0).name, nodes.get(1).name)));
    }

    /** Opens (or reclaims) the queue, retrying while connections come up (bounded). */
    public static OpenResult openWhenConnected(ReplicatedQueueOpener opener, String queue, String owner, long epoch,
                                               Duration max) throws InterruptedException {
        opener.awaitConnected(2, max);
        long deadline = System.nanoTime() + max.toNanos();
        OpenResult r = null;
        while (System.nanoTime() < deadline) {
            r = opener.open(queue, OpenOptions.writer(owner, epoch)).join();
            if (r.isOk()) {
                return r;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("open " + queue + " as " + owner + "/" + epoch + " failed: "
                + (r == null ? "-" : r.status() + " " + r.reason()));
    }

    /** Rows of one queue's copies. */
    public static List<ManagementTable.Row> rows(ReplicatedQueueOpener opener, String queue) {
        return opener.managementTable().rows().stream().filter(r -> r.queue().equals(queue)).toList();
    }

    /** Waits (bounded) until the queue has two SYNC copies and nothing is being rebuilt. */
    public static boolean awaitHealed(ReplicatedQueueOpener opener, String queue, Duration max)
            throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            if (healed(rows(opener, queue))) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    static boolean healed(List<ManagementTable.Row> rows) {
        long sync = rows.stream().filter(r -> r.sync() == SyncState.SYNC && r.note().isEmpty()).count();
        boolean rebuilding = rows.stream().anyMatch(r -> r.sync() == SyncState.REBUILDING);
        return sync == 2 && !rebuilding;
    }

    /** The transaction number of one node's copy of a queue, read directly (0 when the node has no such queue). */
    public static long txnOn(NodeProcess n, String queue) {
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host(n.host).port(n.port)
                .credentials(USER, PASSWORD).requestTimeout(Duration.ofSeconds(20)).build())) {
            OpenResult r = c.open(queue, OpenOptions.reader()).join();
            if (r.status() == org.jameskvs.protocol.Status.NO_SUCH_QUEUE) {
                return 0;
            }
            return r.orThrow().stat().join().txn();
        }
    }

    /** Every message of a queue on one node, read directly in blocks of 1000: id -> how often. */
    public Map<String, Integer> readNode(NodeProcess n, String queue) {
        Map<String, Integer> seen = new HashMap<>();
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host(n.host).port(n.port)
                .credentials(USER, PASSWORD).requestTimeout(Duration.ofSeconds(20)).build())) {
            KvsQueue q = c.open(queue, OpenOptions.reader()).join().orThrow();
            long from = 0;
            while (true) {
                ReadResult rr = q.read(from, 1000, 16 << 20, 0).join();
                if (!rr.isOk()) {
                    throw new IllegalStateException("READ on " + n + ": " + rr.status() + " " + rr.reason());
                }
                if (rr.messages().isEmpty()) {
                    break;
                }
                for (StoredMessage m : rr.messages()) {
                    if (m.id().length > 0 && m.id()[0] != 0) { // a zero first byte: the replication's record
                        seen.merge(new String(m.id(), StandardCharsets.UTF_8), 1, Integer::sum);
                    }
                }
                from = rr.nextPosition();
            }
        }
        return seen;
    }

    /** Every message readable through a (replicated) queue. */
    public static Map<String, Integer> readQueue(KvsQueue q) {
        Map<String, Integer> seen = new HashMap<>();
        long from = 0;
        while (true) {
            ReadResult rr = q.read(from, 1000, 16 << 20, 0).join();
            if (!rr.isOk()) {
                throw new IllegalStateException("READ through " + q + ": " + rr.status() + " " + rr.reason());
            }
            if (rr.messages().isEmpty()) {
                return seen;
            }
            for (StoredMessage m : rr.messages()) {
                seen.merge(new String(m.id(), StandardCharsets.UTF_8), 1, Integer::sum);
            }
            from = rr.nextPosition();
        }
    }

    /** The result of one scenario. */
    public record Outcome(String scenario, int acknowledged, int recovered, int lost, int duplicated, int resurrected,
                          long switchoverMs, long failed, int unacknowledgedPresent, List<String> syncNodes,
                          String table, Map<String, String> notes) {
        public String line() {
            StringBuilder sb = new StringBuilder(String.format(
                    "scenario=%s acknowledged=%d recovered=%d lost=%d duplicated=%d switchover_ms=%d"
                            + " resurrected=%d failed=%d unacked_present=%d sync=%s",
                    scenario, acknowledged, recovered, lost, duplicated, switchoverMs, resurrected, failed,
                    unacknowledgedPresent, String.join(",", syncNodes)));
            notes.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
            return sb.toString();
        }
    }

    /**
     * The end of every scenario: waits for the heal, closes {@code opener} (may be null), lets a new
     * owner reclaim the queue ({@code owner}, {@code nextEpoch}), reads it through the new owner and
     * directly from each SYNC copy, and compares with the ledger. Prints and records the line.
     */
    public Outcome verify(String scenario, ReplicationConfig config, String queue, Ledger ledger,
                          ReplicatedQueueOpener opener, String owner, long nextEpoch, long switchoverMs,
                          Map<String, String> notes) throws Exception {
        Map<String, String> allNotes = new LinkedHashMap<>(notes);
        if (opener != null) {
            boolean healed = awaitHealed(opener, queue, Duration.ofSeconds(30));
            allNotes.put("healed_before_reclaim", Boolean.toString(healed));
            System.out.println("[" + scenario + "] table of the writer after the load:\n"
                    + opener.managementTable().format());
            opener.close();
        }
        Map<String, Integer> viaOwner;
        String table;
        List<String> syncNodes;
        try (ReplicatedQueueOpener reclaimer = ReplicatedQueueOpener.start(config)) {
            KvsQueue q = openWhenConnected(reclaimer, queue, owner, nextEpoch, Duration.ofSeconds(20)).queue();
            boolean healed = awaitHealed(reclaimer, queue, Duration.ofSeconds(30));
            table = reclaimer.managementTable().format();
            System.out.println("[" + scenario + "] table after a new owner reclaimed the queue (healed=" + healed
                    + "):\n" + table);
            viaOwner = readQueue(q);
            // A copy may have flapped meanwhile (e.g. a heartbeat missed on a busy machine): the
            // copies to check are the SYNC ones once the queue is healed again.
            boolean healedAgain = awaitHealed(reclaimer, queue, Duration.ofSeconds(30));
            allNotes.put("healed_after_read", Boolean.toString(healedAgain));
            if (!healedAgain) {
                table = reclaimer.managementTable().format();
            }
            syncNodes = rows(reclaimer, queue).stream().filter(r -> r.sync() == SyncState.SYNC && r.note().isEmpty())
                    .map(ManagementTable.Row::node).toList();
        }
        List<Map<String, Integer>> copies = new ArrayList<>();
        for (String n : syncNodes) {
            copies.add(readNode(node(n), queue));
        }
        copies.add(viaOwner);
        int lost = 0, recovered = 0, resurrected = 0;
        List<String> lostSample = new ArrayList<>();
        for (String id : ledger.acked) {
            boolean mayBeGone = ledger.deleteAttempted.contains(id);
            boolean everywhere = copies.stream().allMatch(c -> c.containsKey(id));
            if (ledger.deleted.contains(id)) {
                if (copies.stream().anyMatch(c -> c.containsKey(id))) {
                    resurrected++;
                }
            } else if (everywhere) {
                recovered++;
            } else if (!mayBeGone) {
                lost++;
                if (lostSample.size() < 5) {
                    lostSample.add(id);
                }
            }
        }
        int duplicated = (int) copies.stream().flatMap(c -> c.entrySet().stream()).filter(e -> e.getValue() > 1)
                .map(Map.Entry::getKey).distinct().count();
        int unackedPresent = (int) copies.get(0).keySet().stream().filter(id -> !ledger.acked.contains(id)).count();
        if (!lostSample.isEmpty()) {
            allNotes.put("lost_sample", String.join(",", lostSample));
        }
        allNotes.put("copies_read", (syncNodes.size()) + "+owner");
        Outcome o = new Outcome(scenario, ledger.acked.size(), recovered, lost, duplicated, resurrected, switchoverMs,
                ledger.failureCount(), unackedPresent, syncNodes, table, allNotes);
        System.out.println(o.line());
        record(o.line());
        return o;
    }

    /** Appends a result line to {@code -Dfaults.results} (default target/faults-results.txt). */
    public static void record(String line) {
        try {
            Path f = Path.of(System.getProperty("faults.results", "target/faults-results.txt"));
            Files.createDirectories(f.toAbsolutePath().getParent());
            Files.writeString(f, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("cannot record result: " + e);
        }
    }

    @Override
    public void close() {
        for (NodeProcess n : nodes) {
            try {
                n.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
