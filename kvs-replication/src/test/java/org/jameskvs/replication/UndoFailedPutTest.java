package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10 item 3, the undo of failed PUTs, on real servers: a PUT that reached one copy only (the
 * other node frozen, no third node to rebuild on, so the put fails as "outcome unknown": on the
 * intake queue a 4xx and a retry) is deleted from the copies by the writer once the queue can write
 * again (the frozen node back and rebuilt), so that neither the same writer reopened at a higher
 * epoch nor a restarted writer (a new adapter, knowing nothing of the failure) ever reads it, and
 * no acknowledged PUT is touched.
 */
class UndoFailedPutTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.undo";

    @Test
    void aPutOnOneCopyOnlyIsUndoneOnBothCopiesAndNoLaterWriterReadsIt() throws Exception {
        cluster = new ProxiedCluster(dir, 2, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(800), Duration.ofMillis(1000))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> acked = new ArrayList<>();
        putAcked(q, "before-", 5, acked);

        int mark = cluster.events.size();
        cluster.freezeNode("kvs2", true);
        CompletableFuture<Ack> lost = put(q, "lost");
        cluster.awaitOnCopy("kvs1", Q, "lost");
        Ack failed = lost.get(60, TimeUnit.SECONDS);
        assertThat(failed.isOk()).as("the put with one copy and no node to rebuild on: %s", failed).isFalse();
        assertThat(cluster.readCopy("kvs1", Q)).as("the failed PUT stays on kvs1 while the queue cannot write")
                .contains("lost");
        assertThat(committedView("kvs1")).as("a read handle on kvs1: held back by the commit point").doesNotContain("lost")
                .containsExactlyElementsOf(acked);

        cluster.freezeNode("kvs2", false);
        cluster.awaitEvent(mark, e -> e.contains("undo of failed PUT lost: done on both copies"), Duration.ofSeconds(60),
                "the undo of the failed PUT acknowledged");
        cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60));
        putAcked(q, "after-", 5, acked);
        for (String node : List.of("kvs1", "kvs2")) {
            assertThat(cluster.readCopy(node, Q)).as("copy on %s: the failed PUT undone, every acknowledged one kept", node)
                    .containsExactlyElementsOf(acked);
            assertThat(committedView(node)).as("a read handle on %s", node).doesNotContain("lost");
        }
        assertThat(ClusterRig.readAll(q)).as("the writer").containsExactlyElementsOf(acked);

        // The same writer, reopened at a higher epoch after its handle was closed.
        q.close();
        KvsQueue reopened = open(cluster.opener, 2);
        assertThat(ClusterRig.readAll(reopened)).as("the writer reopened at epoch 2").containsExactlyElementsOf(acked);
        assertThat(reopened.get(b("lost")).get(30, TimeUnit.SECONDS).status()).isEqualTo(Status.NOT_FOUND);
        reopened.close();

        // A restarted writer: a new adapter that never saw the failure.
        cluster.opener.close();
        cluster.opener = ReplicatedQueueOpener.start(cluster.config);
        assertThat(cluster.opener.awaitConnected(2, Duration.ofSeconds(60))).isTrue();
        KvsQueue restarted = open(cluster.opener, 3);
        assertThat(ClusterRig.readAll(restarted)).as("a restarted writer at epoch 3").containsExactlyElementsOf(acked);
        Ack again = put(restarted, "lost").get(30, TimeUnit.SECONDS);
        assertThat(again.isOk()).as("the sender's retry of the same id: %s", again).isTrue();
        acked.add("lost");
        assertThat(ClusterRig.readAll(restarted)).containsExactlyElementsOf(acked);
        for (String node : List.of("kvs1", "kvs2")) {
            assertThat(cluster.readCopy(node, Q)).as("copy on %s", node).containsExactlyElementsOf(acked);
        }
    }

    /**
     * README: "a writer dying before its undo leaves a duplicate, never a loss". Simulated on real
     * servers ({@link RealNode}), two nodes: writer james1's links to kvs2 go silent, its PUT of
     * {@code lost} reaches kvs1 only and fails (outcome unknown: the sender would retry), the undo
     * waits for a queue that can write; james1 then dies (its ticks stop, all its links silent)
     * before the undo is ever sent. kvs2 is fine for everybody else, and james2 takes the queue
     * over. The failed PUT is not undone by anyone: the copies' content decides, kvs1 (the higher
     * seq) is the source and kvs2 is rebuilt from it, so james2 delivers {@code lost} once (with the
     * sender's retry: twice), and every acknowledged put is there, once, in order.
     */
    @Test
    void aWriterDyingBeforeItsUndoLeavesTheFailedPutForTheNextOwnerNeverALoss() {
        String queue = "mail.example.com";
        try (RealNode.Pool pool = new RealNode.Pool(dir.resolve("sim"))) {
            SimCluster c = new SimCluster(41, 2, 2, pool.forQueue(queue));
            c.run(100);
            SimCluster.Writer w1 = c.writers.get(0);
            SimCluster.Writer w2 = c.writers.get(1);
            assertThat(c.await(w1.open(queue, false), 10_000).isOk()).isTrue();
            List<String> acked = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                assertThat(c.put(w1, "before-" + i, "body").isOk()).isTrue();
                acked.add("before-" + i);
            }

            String dying = w1.client;
            c.world.cutClient(dying, "kvs2", null, true);
            Ack failed = c.put(w1, "lost", "body lost");
            assertThat(failed.isOk()).as("the put that reached kvs1 only: %s\n%s", failed, c.tail()).isFalse();
            assertThat(userIds(c, "kvs1", queue)).as("the failed PUT is on kvs1").contains("lost");
            assertThat(userIds(c, "kvs2", queue)).as("and not on kvs2").doesNotContain("lost");
            assertThat(w1.replica.undosPending()).as("james1 still owes its undo").isEqualTo(1);

            // james1 dies before its undo: no more ticks, nothing of it reaches a node any more.
            int mark = c.log.size();
            w1.boot();
            c.world.cutClient(dying, "kvs1", null, true);
            assertThat(c.await(w2.open(queue, true), 30_000).isOk()).as("james2 takes the queue over\n" + c.tail()).isTrue();
            for (int i = 0; i < 5; i++) {
                assertThat(c.put(w2, "after-" + i, "body").isOk()).isTrue();
                acked.add("after-" + i);
            }
            c.run(5_000);
            assertThat(c.log.subList(mark, c.log.size())).as("nobody undid it")
                    .noneMatch(e -> e.contains("undo of failed PUT lost"));
            assertThat(w2.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");

            List<String> delivered = readAll(c, w2);
            assertThat(delivered).as("what james2 delivers: every acknowledged put once, in order")
                    .containsSubsequence(acked);
            for (String id : acked) {
                assertThat(delivered).as("once: %s", id).containsOnlyOnce(id);
            }
            assertThat(delivered).as("the failed PUT: delivered once by the next owner (the duplicate of the sender's retry)")
                    .containsOnlyOnce("lost").hasSize(acked.size() + 1);
            for (String node : List.of("kvs1", "kvs2")) {
                assertThat(userIds(c, node, queue)).as("copy on %s", node).isEqualTo(delivered);
            }
        }
    }

    private static List<String> userIds(SimCluster c, String node, String queue) {
        return c.world.servers.get(node).view(queue).messages().stream().filter(m -> !Ids.isReserved(m.id()))
                .map(m -> Ids.show(m.id())).toList();
    }

    /** Everything the writer's reads hand out from position 0 (virtual time, bounded). */
    private static List<String> readAll(SimCluster c, SimCluster.Writer w) {
        List<String> ids = new ArrayList<>();
        long from = 0;
        for (int n = 0; n < 1000; n++) {
            org.jameskvs.client.ReadResult rr = c.await(w.core.read(w.replica, from, 100, 1 << 20, 0), 10_000);
            assertThat(rr.isOk()).as("READ: %s %s", rr.status(), rr.reason()).isTrue();
            if (rr.messages().isEmpty()) {
                return ids;
            }
            rr.messages().forEach(m -> ids.add(Ids.show(m.id())));
            from = rr.nextPosition();
        }
        throw new AssertionError("no end of the queue");
    }

    /** What a plain read handle on the node shows (the commit point applies), the record left out. */
    private List<String> committedView(String node) {
        List<String> ids = new ArrayList<>();
        try (org.jameskvs.client.KvsClient c = org.jameskvs.client.KvsClient.connect(org.jameskvs.client.KvsClientConfig
                .builder().host("127.0.0.1").port(cluster.serverPort(node)).credentials("james", ClusterRig.PASSWORD)
                .requestTimeout(Duration.ofSeconds(60)).build())) {
            KvsQueue q = c.open(Q, OpenOptions.reader()).join().orThrow();
            org.jameskvs.client.ReadResult rr = q.read(0, 10_000, 64 << 20, 0).join();
            assertThat(rr.isOk()).isTrue();
            rr.messages().stream().filter(m -> !Ids.isReserved(m.id()))
                    .forEach(m -> ids.add(new String(m.id(), StandardCharsets.UTF_8)));
        }
        return ids;
    }

    private static KvsQueue open(ReplicatedQueueOpener opener, long epoch) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 300; i++) {
            r = opener.open(Q, OpenOptions.writer("james-a", epoch)).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("open at epoch " + epoch + " failed: " + r.status() + " " + r.reason());
    }

    private static void putAcked(KvsQueue q, String prefix, int n, List<String> acked) throws Exception {
        for (int i = 0; i < n; i++) {
            String id = prefix + i;
            Ack a = put(q, id).get(30, TimeUnit.SECONDS);
            assertThat(a.isOk()).as("put %s: %s", id, a).isTrue();
            acked.add(id);
        }
    }

    private static CompletableFuture<Ack> put(KvsQueue q, String id) {
        return q.put(b(id), 0, 0, new byte[0], b("body " + id));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
