package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10 item 3, the readers' side, on real servers: the writer carries the queue's commit point
 * to the servers (with its sequenced mutations, and a COMMIT when idle), and a read-only reader of
 * one copy (a plain read handle on that node, or another James' read-only replica) never sees a PUT
 * that is on that copy only, and sees it once both copies acknowledged it.
 */
class CommitPointReaderTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.committed";

    @Test
    void aReaderOfOneCopyNeverSeesAPutThatIsOnThatCopyOnlyAndSeesItOnceCommitted() throws Exception {
        // Long request and heartbeat timeouts: a frozen node stays a member, its PUT waits for it.
        cluster = new ProxiedCluster(dir, 2, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofSeconds(60), Duration.ofSeconds(60))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue w = cluster.openWriter(Q, "james-a");
        List<String> acked = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            assertThat(put(w, "a" + i).get(30, TimeUnit.SECONDS).isOk()).isTrue();
            acked.add("a" + i);
        }
        for (String node : List.of("kvs1", "kvs2")) {
            awaitCommittedView(node, v -> v.equals(acked), "the acknowledged PUTs, once the idle COMMIT is through");
        }
        ReplicatedQueueOpener otherJames = ReplicatedQueueOpener.start(cluster.config);
        try {
            assertThat(otherJames.awaitConnected(2, Duration.ofSeconds(60))).isTrue();
            KvsQueue reader = openReader(otherJames);
            assertThat(ClusterRig.readAll(reader)).as("another James' read-only replica").isEqualTo(acked);

            cluster.freeze("kvs2", NodePath.ACTIVE, true);
            cluster.freeze("kvs2", NodePath.STANDBY, true);
            CompletableFuture<Ack> pending = put(w, "pending");
            awaitRawView("kvs1", v -> v.contains("pending"), "the PUT applied on kvs1");
            assertThat(cluster.readCopy("kvs2", Q)).as("kvs2 has not got it").doesNotContain("pending");
            List<String> seen = committedView("kvs1");
            assertThat(pending).as("still on kvs1 only while it was read").isNotDone();
            assertThat(seen).as("a read handle on kvs1 while the PUT is on kvs1 only").isEqualTo(acked);
            assertThat(get("kvs1", "pending")).as("GET on a read handle").isFalse();
            // An operator's export (kvs-admin) reads past the commit point: all its copy holds. A third
            // James opened now (short timeouts: frozen kvs2 goes unheard) reads kvs1, the copy with the put.
            ReplicatedQueueOpener exporter = ReplicatedQueueOpener.start(cluster.config.withTimings(
                    Duration.ofMillis(200), Duration.ofSeconds(3), Duration.ofSeconds(5)));
            try {
                KvsQueue export = openReader(exporter);
                assertThat(((ReadOnlyCopy) export).servingNode().join()).as("the exporter's copy").isEqualTo("kvs1");
                List<String> withPending = new ArrayList<>(acked);
                withPending.add("pending");
                assertThat(readAllUncommitted(export)).as("past the commit point: every message of kvs1's copy")
                        .isEqualTo(withPending);
                assertThat(ClusterRig.readAll(export)).as("the same reader at the commit point").isEqualTo(acked);
            } finally {
                exporter.close();
            }

            cluster.freeze("kvs2", NodePath.ACTIVE, false);
            cluster.freeze("kvs2", NodePath.STANDBY, false);
            Ack ok = pending.get(60, TimeUnit.SECONDS);
            assertThat(ok.isOk()).as("acknowledged once kvs2 answered: %s", ok).isTrue();
            acked.add("pending");
            for (String node : List.of("kvs1", "kvs2")) {
                awaitCommittedView(node, v -> v.equals(acked), "the PUT, once committed");
            }
            assertThat(get("kvs1", "pending")).isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!ClusterRig.readAll(reader).equals(acked)) {
                assertThat(System.nanoTime()).as("the read-only replica sees it once committed").isLessThan(deadline);
                Thread.sleep(20);
            }
        } finally {
            otherJames.close();
        }
    }

    /** Every id a reader shows past the commit point, block by block (bounded). */
    private static List<String> readAllUncommitted(KvsQueue reader) throws Exception {
        return ClusterRig.readIds(from -> reader.readUncommitted(from, 1000, 8 << 20, 0), false);
    }

    private static KvsQueue openReader(ReplicatedQueueOpener opener) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 300; i++) {
            r = opener.open(Q, OpenOptions.reader()).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("read-only open failed: " + r.status() + " " + r.reason());
    }

    /** What a plain read handle on the node shows (the commit point applies), the record left out. */
    private List<String> committedView(String node) {
        List<String> ids = new ArrayList<>();
        try (KvsClient c = plainClient(node)) {
            KvsQueue q = c.open(Q, OpenOptions.reader()).join().orThrow();
            long from = 0;
            for (int block = 0; block < 1000; block++) {
                ReadResult rr = q.read(from, 1000, 8 << 20, 0).join();
                assertThat(rr.isOk()).as("%s %s", rr.status(), rr.reason()).isTrue();
                if (rr.messages().isEmpty()) {
                    return ids;
                }
                for (StoredMessage m : rr.messages()) {
                    if (!Ids.isReserved(m.id())) {
                        ids.add(new String(m.id(), StandardCharsets.UTF_8));
                    }
                }
                from = rr.nextPosition();
            }
        }
        throw new AssertionError("no end of the queue after 1000 blocks");
    }

    private boolean get(String node, String id) {
        try (KvsClient c = plainClient(node)) {
            KvsQueue q = c.open(Q, OpenOptions.reader()).join().orThrow();
            return q.get(id.getBytes(StandardCharsets.UTF_8)).join().isOk();
        }
    }

    private KvsClient plainClient(String node) {
        return KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(cluster.serverPort(node))
                .credentials("james", ClusterRig.PASSWORD).requestTimeout(Duration.ofSeconds(60)).build());
    }

    private void awaitCommittedView(String node, Predicate<List<String>> what, String description) throws InterruptedException {
        await(() -> committedView(node), what, node + ": " + description);
    }

    private void awaitRawView(String node, Predicate<List<String>> what, String description) throws InterruptedException {
        await(() -> cluster.readCopy(node, Q), what, node + ": " + description);
    }

    private static void await(java.util.function.Supplier<List<String>> view, Predicate<List<String>> what, String description)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<String> last = view.get();
        while (!what.test(last)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 30 s: " + description + "; last seen " + last);
            }
            Thread.sleep(20);
            last = view.get();
        }
    }

    private static CompletableFuture<Ack> put(KvsQueue q, String id) {
        return q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8));
    }
}
