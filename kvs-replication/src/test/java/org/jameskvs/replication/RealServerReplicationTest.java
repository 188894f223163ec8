package org.jameskvs.replication;

import org.jameskvs.testkit.FreezableProxy;
import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real KVS servers (in-process {@link KvsServer}s, each with its own journal directory) behind the
 * real adapter ({@link ReplicatedQueueOpener} with real KvsClient connections): writes under load
 * while one server of the queue's pair is closed. Every acknowledged write must be on the two
 * copies that remain in sync (the survivor and the rebuilt one).
 */
class RealServerReplicationTest {
    private static final String PASSWORD = "secret";
    private static final String Q = "spool.outgoing";

    @TempDir
    Path dir;

    private final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private ReplicatedQueueOpener opener;

    @AfterEach
    void tearDown() {
        if (opener != null) {
            opener.close();
        }
        servers.values().forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // already closed by the test
            }
        });
    }

    private ReplicationConfig startCluster(int n) {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            String name = "kvs" + i;
            KvsServer s = KvsServer.start(ServerConfig.forTest(dir.resolve(name), PASSWORD));
            servers.put(name, s);
            specs.add(new ReplicationConfig.NodeSpec(name, "127.0.0.1", s.port(), "127.0.0.1", s.port()));
        }
        return ReplicationConfig.of(specs, "james", PASSWORD)
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(600), Duration.ofMillis(1000))
                .withCopyBlock(500, 4 << 20);
    }

    private OpenResult openWhenConnected(String owner, long epoch) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 50; i++) {
            r = opener.open(Q, OpenOptions.writer(owner, epoch)).join();
            if (r.isOk()) {
                return r;
            }
            Thread.sleep(100); // connections still coming up
        }
        throw new AssertionError("open failed: " + r.status() + " " + r.reason());
    }

    @Test
    void writesUnderLoadWhileOneServerStops() throws Exception {
        ReplicationConfig config = startCluster(3);
        loadWhileNodeFails(config, victim -> servers.get(victim).close(), "closed (connections drop)");
    }

    @Test
    void writesUnderLoadWhileOneServerFreezes() throws Exception {
        // Each node behind a proxy that can stop all traffic without closing anything (partition /
        // SIGSTOP): only heartbeats and request timeouts detect it. Default timings.
        startCluster(3);
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        Map<String, FreezableProxy> proxies = new LinkedHashMap<>();
        for (Map.Entry<String, KvsServer> e : servers.entrySet()) {
            FreezableProxy p = new FreezableProxy(e.getValue().port());
            proxies.put(e.getKey(), p);
            specs.add(new ReplicationConfig.NodeSpec(e.getKey(), "127.0.0.1", p.port(), "127.0.0.1", p.port()));
        }
        try {
            ReplicationConfig config = ReplicationConfig.of(specs, "james", PASSWORD).withCopyBlock(500, 4 << 20);
            loadWhileNodeFails(config, victim -> proxies.get(victim).freeze(true), "frozen (no traffic, no close)");
        } finally {
            proxies.values().forEach(FreezableProxy::close);
        }
    }

    private void loadWhileNodeFails(ReplicationConfig config, java.util.function.Consumer<String> fail, String how)
            throws Exception {
        opener = ReplicatedQueueOpener.start(config);
        KvsQueue q = openWhenConnected("james-a", 1).queue();
        System.out.println(opener.managementTable().format());
        List<String> pair = opener.managementTable().rows().stream().map(ManagementTable.Row::node).toList();
        assertThat(pair).hasSize(2);

        Map<String, Long> acked = new ConcurrentHashMap<>(); // id -> ack time
        Set<String> deleted = ConcurrentHashMap.newKeySet();
        Set<String> deleteAttempted = ConcurrentHashMap.newKeySet(); // outcome maybe unknown
        Set<String> attempted = ConcurrentHashMap.newKeySet();
        AtomicLong failures = new AtomicLong();
        AtomicLong deleteOutcomes = new AtomicLong();
        AtomicLong stopAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLong firstAckAfterStop = new AtomicLong(Long.MAX_VALUE);
        Semaphore window = new Semaphore(32);
        long loadEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(7);
        long stopTime = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
        String victim = pair.get(1);
        int i = 0;
        List<CompletableFuture<Ack>> all = new ArrayList<>();
        while (System.nanoTime() < loadEnd) {
            if (System.nanoTime() > stopTime && stopAt.get() == Long.MAX_VALUE) {
                stopAt.set(System.nanoTime());
                fail.accept(victim);
                System.out.println(victim + " " + how);
            }
            window.acquire();
            String id = "m-" + (i++);
            attempted.add(id);
            long issued = System.nanoTime();
            CompletableFuture<Ack> f = q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0],
                    ("body " + id).getBytes(StandardCharsets.UTF_8));
            all.add(f);
            f.whenComplete((a, t) -> {
                window.release();
                if (a != null && a.isOk()) {
                    long now = System.nanoTime();
                    acked.put(id, now);
                    if (issued > stopAt.get()) {
                        firstAckAfterStop.accumulateAndGet(now, Math::min);
                    }
                    if (id.hashCode() % 5 == 0) {
                        deleteAttempted.add(id);
                        q.delete(id.getBytes(StandardCharsets.UTF_8)).thenAccept(d -> {
                            if (d.isOk()) {
                                deleted.add(id);
                            }
                            deleteOutcomes.incrementAndGet();
                        });
                    }
                } else {
                    failures.incrementAndGet();
                }
            });
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        // The switchover is measured on the first put issued after the failure that is acknowledged:
        // if none was within the load (a slow machine), go on putting until one is (bounded), rather
        // than race the clock.
        long switchDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (firstAckAfterStop.get() == Long.MAX_VALUE && System.nanoTime() < switchDeadline) {
            String id = "m-" + (i++);
            attempted.add(id);
            long issued = System.nanoTime();
            Ack a = q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8))
                    .get(60, TimeUnit.SECONDS);
            if (a.isOk()) {
                acked.put(id, System.nanoTime());
                firstAckAfterStop.accumulateAndGet(System.nanoTime(), Math::min);
            } else {
                failures.incrementAndGet();
                Thread.sleep(50);
            }
            assertThat(issued).isGreaterThan(stopAt.get());
        }
        awaitTrailingDeletes(deleteAttempted, deleteOutcomes);

        // Wait until the queue has two SYNC copies again (the third node was rebuilt).
        List<ManagementTable.Row> rows = List.of();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            rows = opener.managementTable().rows().stream().filter(r -> r.sync() == SyncState.SYNC).toList();
            if (rows.size() == 2 && !opener.managementTable().format().contains("rebuilding")) {
                break;
            }
            Thread.sleep(100);
        }
        System.out.println(opener.managementTable().format());
        assertThat(rows).hasSize(2);
        List<String> syncNodes = rows.stream().map(ManagementTable.Row::node).toList();
        assertThat(syncNodes).doesNotContain(victim);

        long lost = 0, recovered = 0, resurrected = 0, duplicated = 0, extra = 0;
        for (String node : syncNodes) {
            Map<String, Integer> seen = readAll(node);
            for (Map.Entry<String, Integer> e : seen.entrySet()) {
                if (e.getValue() > 1) {
                    duplicated++;
                }
                if (!acked.containsKey(e.getKey())) {
                    extra++; // a put whose outcome was "failed/unknown" but that did land: allowed
                }
            }
            for (String id : acked.keySet()) {
                boolean present = seen.containsKey(id);
                if (deleted.contains(id)) {
                    resurrected += present ? 1 : 0;
                } else if (present) {
                    recovered++;
                } else if (!deleteAttempted.contains(id)) {
                    lost++; // acknowledged, never (maybe) deleted, and not there
                }
            }
        }
        long switchover = firstAckAfterStop.get() == Long.MAX_VALUE ? -1
                : TimeUnit.NANOSECONDS.toMillis(firstAckAfterStop.get() - stopAt.get());
        System.out.printf("real servers: attempted=%d acknowledged=%d (deleted %d) failed=%d; per copy over %s: "
                        + "recovered=%d lost=%d resurrected=%d duplicated=%d unacknowledged-but-present=%d; "
                        + "switchover after %s %s: %d ms%n",
                attempted.size(), acked.size(), deleted.size(), failures.get(), syncNodes, recovered, lost, resurrected,
                duplicated, extra, victim, how, switchover);
        assertThat(lost).isZero();
        assertThat(resurrected).isZero();
        assertThat(duplicated).isZero();
        assertThat(switchover).isPositive();
    }

    /** Waits (bounded) until every delete issued from the ack callbacks has its outcome. */
    private static void awaitTrailingDeletes(Set<String> attempted, AtomicLong deleteOutcomes) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && deleteOutcomes.get() < attempted.size()) {
            Thread.sleep(20);
        }
        assertThat(deleteOutcomes.get()).as("outcomes of the trailing deletes").isEqualTo(attempted.size());
    }

    @Test
    void takeoverByAnotherJamesNodeFencesTheFirst() throws Exception {
        ReplicationConfig config = startCluster(3);
        opener = ReplicatedQueueOpener.start(config);
        KvsQueue a = openWhenConnected("james-a", 1).queue();
        assertThat(a.put("x1".getBytes(), 0, 0, new byte[0], "b".getBytes()).join().isOk()).isTrue();
        try (ReplicatedQueueOpener other = ReplicatedQueueOpener.start(config)) {
            OpenResult denied = null;
            for (int i = 0; i < 50; i++) {
                denied = other.open(Q, OpenOptions.writer("james-b", 1)).join();
                if (denied.status() != Status.TIMEOUT) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(denied.status()).isEqualTo(Status.QUEUE_LOCKED);
            OpenResult taken = other.takeOver(Q, OpenOptions.writer("james-b", 1)).join();
            assertThat(taken.isOk()).as(taken.reason()).isTrue();
            KvsQueue b = taken.queue();
            assertThat(a.put("x2".getBytes(), 0, 0, new byte[0], "b".getBytes()).join().status()).isEqualTo(Status.STALE_EPOCH);
            assertThat(b.put("x3".getBytes(), 0, 0, new byte[0], "b".getBytes()).join().isOk()).isTrue();
            ReadResult rr = b.read(0, 100, 1 << 20, 0).join();
            assertThat(rr.messages()).extracting(m -> new String(m.id())).containsExactly("x1", "x3");
        }
    }

    @Test
    void leaseExpiryLetsAnotherNodeTakeOver() throws Exception {
        // Renewed every 200 ms, expired after 3 s without a renewal: only a stall of 15 renewals
        // could let the watcher take over from a live owner.
        ReplicationConfig config = startCluster(3).withLease(Duration.ofMillis(200), Duration.ofMillis(3000));
        opener = ReplicatedQueueOpener.start(config);
        KvsQueue a = openWhenConnected("james-a", 1).queue();
        assertThat(a.put("x1".getBytes(), 0, 0, new byte[0], "b".getBytes()).join().isOk()).isTrue();
        try (ReplicatedQueueOpener other = ReplicatedQueueOpener.start(config)) {
            CompletableFuture<OpenResult> waiting = other.takeOverWhenLeaseExpires(Q, OpenOptions.writer("james-b", 1));
            // Wait for renewals (the record's lease counter seen moving on a copy), not for time.
            String copy = opener.managementTable().rows().get(0).node();
            long renewals = leaseRenewals(copy);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (leaseRenewals(copy) < renewals + 10 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(leaseRenewals(copy)).as("renewals seen").isGreaterThanOrEqualTo(renewals + 10);
            assertThat(waiting).as("the lease is renewed while the owner lives").isNotDone();
            long t0 = System.nanoTime();
            opener.close(); // the owner dies
            opener = null;
            OpenResult r = waiting.get(20, TimeUnit.SECONDS);
            assertThat(r.isOk()).as(r.reason()).isTrue();
            System.out.printf("lease takeover %d ms after the owner stopped%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            assertThat(r.queue().get("x1".getBytes()).join().isOk()).isTrue();
        }
    }

    /** The lease counter of the replication record on one node's copy, read with a plain client. */
    private long leaseRenewals(String node) {
        KvsServer s = servers.get(node);
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(s.port())
                .credentials("james", PASSWORD).build())) {
            KvsQueue q = c.open(Q, OpenOptions.reader()).join().orThrow();
            var g = q.get(Ids.RECORD_ID).join();
            assertThat(g.isOk()).as("record on %s: %s", node, g.status()).isTrue();
            MembershipRecord rec = MembershipRecord.decode(g.message().state());
            assertThat(rec).isNotNull();
            return rec.renewals();
        }
    }

    /** Every message on one node, read directly (block-wise) with a plain client. */
    private Map<String, Integer> readAll(String node) {
        KvsServer s = servers.get(node);
        Map<String, Integer> seen = new HashMap<>();
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(s.port())
                .credentials("james", PASSWORD).build())) {
            KvsQueue q = c.open(Q, OpenOptions.reader()).join().orThrow();
            long from = 0;
            while (true) {
                ReadResult rr = q.read(from, 1000, 16 << 20, 0).join();
                assertThat(rr.isOk()).isTrue();
                if (rr.messages().isEmpty()) {
                    break;
                }
                for (StoredMessage m : rr.messages()) {
                    if (!Ids.isReserved(m.id())) {
                        seen.merge(new String(m.id(), StandardCharsets.UTF_8), 1, Integer::sum);
                    }
                }
                from = rr.nextPosition();
            }
        }
        return seen;
    }
}
