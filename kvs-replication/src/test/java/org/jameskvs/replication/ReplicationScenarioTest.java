package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;


import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hand-written scenarios on the simulated network, one behaviour each, against the real servers
 * ({@link RealNode}); the two scenarios of a copy emptied behind open handles run on the model
 * ({@link SimServer}), which can empty a queue in place (a real server cannot: its journal is gone
 * only with the process, and then so are the handles).
 */
class ReplicationScenarioTest extends RealNodeSimulation {
    private static final String Q = "mail.example.com";

    private SimCluster cluster(long seed) {
        SimCluster c = new SimCluster(seed, 3, 2, pool.forQueue(Q));
        c.run(100);
        return c;
    }

    private SimCluster modelCluster(long seed) {
        SimCluster c = new SimCluster(seed, 3, 2);
        c.run(100);
        return c;
    }

    private SimCluster.Writer openFirst(SimCluster c) {
        SimCluster.Writer w = c.writers.get(0);
        OpenResult r = c.await(w.open(Q, false), 10_000);
        assertThat(r.isOk()).as(r.reason() + "\n" + c.tail()).isTrue();
        return w;
    }

    /** {@code n} puts ({@code prefix} + i), each acknowledged. */
    private static void putAcknowledged(SimCluster c, SimCluster.Writer w, String prefix, int n) {
        for (int i = 0; i < n; i++) {
            assertThat(c.put(w, prefix + i, "b").isOk()).as(prefix + i).isTrue();
        }
    }

    private static SimNode.QueueView queueOn(SimCluster c, String node) {
        return c.world.servers.get(node).view(Q);
    }

    private static int liveOn(SimCluster c, String node) {
        SimNode.QueueView q = queueOn(c, node);
        return q == null ? 0 : (int) q.messages().stream().filter(m -> !Ids.isReserved(m.id())).count();
    }

    private static java.util.Set<String> idsOn(SimNode.QueueView q) {
        java.util.Set<String> ids = new java.util.TreeSet<>();
        q.messages().forEach(m -> ids.add(Ids.show(m.id())));
        return ids;
    }

    @Test
    void putIsOnBothPlacedNodesAndTransactionNumbersMatch() {
        SimCluster c = cluster(1);
        SimCluster.Writer w = openFirst(c);
        List<String> nodes = w.replica.syncNodes();
        assertThat(nodes).hasSize(2).isEqualTo(new Placement(c.config).pair(Q));
        for (int i = 0; i < 20; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        Ack d = c.await(w.core.delete(w.replica, "m3".getBytes()), 5000);
        assertThat(d.isOk()).isTrue();
        Ack r = c.await(w.core.replace(w.replica, "m4".getBytes(), 2, 0, "retry=1".getBytes()), 5000);
        assertThat(r.isOk()).isTrue();
        for (String n : nodes) {
            assertThat(liveOn(c, n)).isEqualTo(19);
            assertThat(w.replica.memberTxns().get(n)).isEqualTo(queueOn(c, n).txn());
        }
        GetResult g = c.await(w.core.get(w.replica, "m4".getBytes()), 5000);
        assertThat(new String(g.message().state())).isEqualTo("retry=1");
        ReadResult rr = c.await(w.core.read(w.replica, 0, 100, 1 << 20, 0), 5000);
        assertThat(rr.messages()).hasSize(19).noneMatch(m -> Ids.isReserved(m.id()));
        assertThat(c.await(w.core.stat(w.replica), 5000).size()).isEqualTo(19);
        String table = w.core.table().format();
        System.out.println(table);
        assertThat(table).contains("RUN").contains("SYNC");
    }

    @Test
    void activePathCutSwitchesToStandbyWithoutLosingAnAck() {
        SimCluster c = cluster(2);
        SimCluster.Writer w = openFirst(c);
        String n0 = w.replica.syncNodes().get(0);
        List<CompletableFuture<Ack>> acks = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            acks.add(w.core.put(w.replica, ("a" + i).getBytes(), 0, 0, new byte[0], new byte[10]));
        }
        c.world.cut(n0, NodePath.ACTIVE, true);
        for (int i = 10; i < 20; i++) {
            acks.add(w.core.put(w.replica, ("a" + i).getBytes(), 0, 0, new byte[0], new byte[10]));
        }
        c.run(6000);
        for (CompletableFuture<Ack> a : acks) {
            assertThat(a.join().isOk()).as(a.join() + "\n" + c.tail()).isTrue();
        }
        assertThat(w.replica.memberOn(n0).path).isEqualTo(NodePath.STANDBY);
        assertThat(liveOn(c, n0)).isEqualTo(20);
        assertThat(w.replica.memberTxns().get(n0)).isEqualTo(queueOn(c, n0).txn());
        System.out.println(w.core.table().format());
    }

    @Test
    void crashedNodeIsReplacedAndRebuiltWhileWritesContinue() {
        SimCluster c = cluster(3);
        SimCluster.Writer w = openFirst(c);
        putAcknowledged(c, w, "old", 50);
        List<String> before = w.replica.syncNodes();
        String victim = before.get(1);
        c.world.crash(victim);
        // Writes during detection fail (only one copy) or succeed (two copies); never a lie.
        List<CompletableFuture<Ack>> during = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String id = "new" + i;
            ids.add(id);
            during.add(w.core.put(w.replica, id.getBytes(), 0, 0, new byte[0], "x".getBytes()));
            if (i == 100) {
                // delete and replace old messages while the copy runs
                during.add(w.core.delete(w.replica, "old7".getBytes()));
                during.add(w.core.replace(w.replica, "old40".getBytes(), 1, 0, "s2".getBytes()));
            }
            c.run(20);
        }
        c.run(10_000);
        assertThat(w.replica.syncNodes()).hasSize(2).doesNotContain(victim);
        String fresh = w.replica.syncNodes().stream().filter(n -> !before.contains(n)).findFirst().orElseThrow();
        String survivor = before.get(0);
        SimNode.QueueView a = queueOn(c, survivor), b = queueOn(c, fresh);
        assertThat(idsOn(b)).isEqualTo(idsOn(a));
        assertThat(b.find("old7")).isNull();
        assertThat(new String(b.find("old40").state())).isEqualTo("s2");
        for (int i = 0; i < ids.size(); i++) {
            if (during.get(i < 101 ? i : i + 2).join().isOk()) {
                assertThat(a.find(ids.get(i))).as(ids.get(i) + " on " + survivor).isNotNull();
                assertThat(b.find(ids.get(i))).as(ids.get(i) + " on " + fresh).isNotNull();
            }
        }
        assertThat(w.replica.memberTxns().get(fresh)).isEqualTo(b.txn());
        System.out.println(w.core.table().format());
    }

    @Test
    void takeoverFencesTheOldOwner() {
        SimCluster c = cluster(4);
        SimCluster.Writer a = openFirst(c);
        assertThat(c.put(a, "x1", "b").isOk()).isTrue();
        SimCluster.Writer b = c.writers.get(1);
        OpenResult denied = c.await(b.open(Q, false), 10_000);
        assertThat(denied.status()).isEqualTo(Status.QUEUE_LOCKED);
        OpenResult r = c.await(b.open(Q, true), 10_000);
        assertThat(r.isOk()).as(r.reason() + "\n" + c.tail()).isTrue();
        Ack old = c.put(a, "x2", "b");
        assertThat(old.status()).isEqualTo(Status.STALE_EPOCH);
        assertThat(a.replica.isFenced()).isTrue();
        assertThat(c.put(b, "x3", "b").isOk()).isTrue();
        ReadResult rr = c.await(b.core.read(b.replica, 0, 10, 1 << 20, 0), 5000);
        assertThat(rr.messages()).extracting(m -> new String(m.id())).containsExactly("x1", "x3");
    }

    /**
     * A takeover's probe saw both copies; one of them loses its disk before the fence reaches it.
     * The fence names the store the probe saw, so the emptied node refuses it (STORE_CHANGED)
     * instead of taking the new epoch on an empty queue; the open does not wait for that copy (it
     * is gone, not late) and goes on at once with the one that kept the mail. Every acknowledged put
     * is read back, and two copies hold them again.
     */
    @Test
    void aNodeWipedBetweenTheProbeAndTheFenceRefusesTheFence() {
        SimCluster c = cluster(11);
        SimCluster.Writer a = openFirst(c);
        putAcknowledged(c, a, "w", 20);
        String wiped = a.replica.syncNodes().get(0);
        SimCluster.Writer b = c.writers.get(1);
        List<NodeRequest> wipedAtFence = new ArrayList<>();
        c.world.beforeSendOnce = r -> {
            if (r.op() == NodeOp.OPEN_WRITE && r.owner().equals(b.owner) && r.node().equals(wiped)
                    && r.expectedStore() != 0) {
                c.world.crash(wiped);
                c.world.restart(wiped, false);
                wipedAtFence.add(r);
                return true;
            }
            return false;
        };
        c.world.trace = new ArrayList<>();
        OpenResult r = c.await(b.open(Q, true), 20_000);
        assertThat(wipedAtFence).as("the fence reached the node only after its wipe").hasSize(1);
        assertThat(r.isOk()).as(r.reason() + "\n" + c.tail()).isTrue();
        assertThat(c.log).as("the open knows the copy is gone, not to be waited for")
                .anyMatch(e -> e.contains(b.client) && e.contains(wiped + " lost its disk since the probe"));
        assertThat(c.world.trace).as("the emptied node refused the fence")
                .anyMatch(t -> t.contains(">" + wiped + "/") && t.contains("OPEN_WRITE") && t.contains("-> STORE_CHANGED"));
        assertThat(c.put(a, "stale", "b").isOk()).as("the old owner is fenced").isFalse();
        List<String> got = new ArrayList<>();
        c.await(b.core.read(b.replica, 0, 100, 1 << 20, 0), 5000).messages().forEach(m -> got.add(new String(m.id())));
        assertThat(got).as("every acknowledged put, in order").hasSize(20).startsWith("w0").endsWith("w19");
        c.run(10_000);
        assertThat(b.replica.syncNodes()).as("two copies again").hasSize(2);
        for (String n : b.replica.syncNodes()) {
            assertThat(liveOn(c, n)).as("live mail on " + n).isEqualTo(20);
        }
    }

    /**
     * A stale writer (taken over by B) restarts and reclaims while it reaches only a node that lost
     * its disk, cut from the node with the queue. It hears one node of two: it cannot tell a new
     * queue from one whose copies are elsewhere, so its open fails (TIMEOUT, "try again") and
     * acknowledges nothing. Once the cut heals it finds B's queue (QUEUE_LOCKED); B never lost its
     * ownership and every put B had acknowledged is on both copies again.
     */
    @Test
    void aStaleWritersReclaimHearingOnlyAWipedNodeTakesNothing() {
        SimCluster c = new SimCluster(12, 2, 2, pool.forQueue(Q));
        c.run(100);
        SimCluster.Writer a = openFirst(c);
        putAcknowledged(c, a, "a", 10);
        SimCluster.Writer b = c.writers.get(1);
        OpenResult took = c.await(b.open(Q, true), 10_000);
        assertThat(took.isOk()).as(took.reason()).isTrue();
        putAcknowledged(c, b, "b", 10);
        a.boot(); // A restarts and forgets it was taken over
        c.run(50); // its heartbeats set up its links
        c.world.cutClient(a.client, "kvs2", null, true);
        c.world.cutClient(b.client, "kvs1", null, true); // B does not rebuild kvs1 meanwhile
        c.world.crash("kvs1");
        c.world.restart("kvs1", false);
        // James retries an open that failed at its next enqueue or dequeue. An open that can only
        // fail leaves nothing: a trace at A's epoch on the wiped node, one epoch higher at each
        // retry, would pass B's epoch there, and B's rebuild of that copy would then be refused and
        // fence B (no writer at all; so it was before 2026-12-04).
        for (int attempt = 1; attempt <= 6; attempt++) {
            OpenResult stale = c.await(a.open(Q, false), 10_000);
            assertThat(stale.status()).as("attempt " + attempt + ": " + stale.reason() + "\n" + c.tail())
                    .isEqualTo(Status.TIMEOUT);
            assertThat(stale.reason()).contains("no record of " + Q + " on 1 of 2 nodes", "a new queue needs two reachable nodes");
            assertThat(a.replica).as("A holds no replica").isNull();
            c.run(200);
        }
        assertThat(c.world.servers.get("kvs1").view(Q)).as("what A's attempts left on the wiped node").isNull();

        c.world.cutClient(a.client, "kvs2", null, false);
        c.world.cutClient(b.client, "kvs1", null, false);
        c.run(10_000);
        OpenResult later = c.await(a.open(Q, false), 10_000);
        assertThat(later.status()).as(later.reason() + "\n" + c.tail()).isEqualTo(Status.QUEUE_LOCKED);
        assertThat(b.replica.isFenced()).as("B still owns the queue").isFalse();
        assertThat(c.put(b, "b-after", "b").isOk()).as(c.tail()).isTrue();
        assertThat(b.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        for (String n : List.of("kvs1", "kvs2")) {
            assertThat(liveOn(c, n)).as("live mail on " + n).isEqualTo(21);
        }
    }

    @Test
    void restartedOwnerReclaimsWithAHigherEpochAndReadsInBlocks() {
        SimCluster c = cluster(5);
        SimCluster.Writer a = openFirst(c);
        putAcknowledged(c, a, "r", 30);
        long epoch = a.replica.epochCounter();
        a.boot(); // the James process restarts and forgets everything
        c.run(100);
        OpenResult r = c.await(a.open(Q, false), 10_000);
        assertThat(r.isOk()).as(r.reason()).isTrue();
        assertThat(r.size()).isEqualTo(30);
        assertThat(a.replica.epochCounter()).isEqualTo(epoch + 1);
        List<String> got = new ArrayList<>();
        long from = 0;
        while (true) {
            ReadResult rr = c.await(a.core.read(a.replica, from, 8, 1 << 20, 0), 5000);
            if (rr.messages().isEmpty()) {
                break;
            }
            rr.messages().forEach(m -> got.add(new String(m.id())));
            from = rr.nextPosition();
        }
        assertThat(got).hasSize(30).startsWith("r0", "r1").endsWith("r29");
    }

    @Test
    void withOnlyOneNodeLeftMutationsFail() {
        SimCluster c = new SimCluster(6, 2, 1, pool.forQueue(Q));
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        assertThat(c.put(w, "a", "b").isOk()).isTrue();
        c.world.crash("kvs2");
        c.run(3000);
        Ack a = c.put(w, "b", "b");
        assertThat(a.isOk()).isFalse();
        c.world.restart("kvs2", false);
        c.run(8000);
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(c.put(w, "c", "b").isOk()).isTrue();
        assertThat(liveOn(c, "kvs2")).isEqualTo(2);
    }

    @Test
    void clearDuringRebuildLeavesNothingBehind() {
        SimCluster c = cluster(7);
        SimCluster.Writer w = openFirst(c);
        putAcknowledged(c, w, "c", 100);
        String victim = w.replica.syncNodes().get(0);
        c.world.crash(victim);
        c.run(2500);
        assertThat(w.replica.isRebuilding() || w.replica.syncNodes().size() == 2).isTrue();
        Ack clr = c.await(w.core.clear(w.replica), 5000);
        assertThat(clr.isOk()).as(clr + "\n" + c.tail()).isTrue();
        assertThat(c.put(w, "after", "b").isOk()).isTrue();
        c.run(5000);
        for (String n : w.replica.syncNodes()) {
            assertThat(liveOn(c, n)).as(n).isEqualTo(1);
        }
    }

    @Test
    void switchoverTimeAfterANodeFreezesWithDefaultTimings() {
        // Virtual time, default heartbeat (500 ms / 1.5 s) and request timeout (2 s): a member is
        // paused (SIGSTOP-like: no answer, no connection error), writes continue every 10 ms.
        SimCluster c = cluster(8);
        SimCluster.Writer w = openFirst(c);
        assertThat(c.put(w, "warm", "b").isOk()).isTrue();
        String victim = w.replica.syncNodes().get(1);
        long stoppedAt = c.world.now;
        c.world.pause(victim);
        long firstAck = -1;
        for (int i = 0; i < 1000 && firstAck < 0; i++) {
            CompletableFuture<Ack> f = w.core.put(w.replica, ("p" + i).getBytes(), 0, 0, new byte[0], new byte[1]);
            c.run(10);
            int waited = 0;
            while (!f.isDone() && waited++ < 5000) {
                c.run(1);
            }
            if (f.join().isOk()) {
                firstAck = c.world.now;
            }
        }
        long ms = (firstAck - stoppedAt) / SimCluster.MS;
        System.out.println("simulated switchover after freezing " + victim + ": " + ms + " ms (virtual)");
        assertThat(firstAck).isPositive();
        assertThat(ms).isLessThan(3000);
        c.world.resume(victim);
    }

    /**
     * A node came back without its journal and its client re-opened our write handle by itself
     * (KvsClient does after a reconnect), which created the queue again, empty: the copy is empty
     * behind a handle that works, and only transaction numbers can tell.
     */
    private static void emptiedBehindOpenHandles(SimCluster c, String node) {
        SimServer.SimQueue q = c.world.model(node).queues.get(Q);
        q.byPos.clear();
        q.byId.clear();
        q.txn = 1;
        q.seq = 0; // a queue created anew: no seq, no digest, no outcomes kept
        q.digest = 0;
        q.outcomes.clear();
    }

    @Test
    void aPutAnsweredByACopyThatLostItsDataStillGetsAnOutcome() {
        SimCluster c = modelCluster(9);
        SimCluster.Writer w = openFirst(c);
        putAcknowledged(c, w, "m", 20);
        emptiedBehindOpenHandles(c, w.replica.syncNodes().get(1));
        // The emptied copy's answer (a transaction number far too low) isolates it; the put waited
        // for that copy's answer forever (the adapter's backstop ended it: TIMEOUT, stored anyway).
        Ack a = c.put(w, "after", "b");
        assertThat(a.isOk()).as(a + "\n" + c.tail()).isTrue();
        c.run(5_000);
        assertThat(w.replica.syncNodes()).hasSize(2);
        for (String n : w.replica.syncNodes()) {
            assertThat(liveOn(c, n)).as("messages on " + n).isEqualTo(21);
        }
    }

    @Test
    void aReadFromACopyThatLostItsDataIsServedByTheOtherCopy() {
        SimCluster c = modelCluster(10);
        SimCluster.Writer w = openFirst(c);
        putAcknowledged(c, w, "m", 20);
        ReadResult before = c.await(w.core.read(w.replica, 0, 100, 1 << 20, 0), 5_000);
        String serving = w.replica.readCopyNode();
        emptiedBehindOpenHandles(c, serving);
        // Nothing is written: the read is the first to meet the emptied copy (it answered an empty queue).
        ReadResult after = c.await(w.core.read(w.replica, 0, 100, 1 << 20, 0), 5_000);
        assertThat(after.messages()).as(c.tail()).hasSize(20);
        // Both copies numbered the puts by their seqs: the reader's positions hold on the other copy.
        assertThat(after.positionSpace()).isEqualTo(before.positionSpace());
        assertThat(after.messages()).extracting(m -> m.position())
                .containsExactlyElementsOf(before.messages().stream().map(m -> m.position()).toList());
        assertThat(w.replica.readCopyNode()).isNotEqualTo(serving);
        c.run(5_000);
        assertThat(w.replica.syncNodes()).hasSize(2);
        for (String n : w.replica.syncNodes()) {
            assertThat(liveOn(c, n)).as("messages on " + n).isEqualTo(20);
        }
    }

    @Test
    void putsInFlightWhenACopyIsLostWaitForALongRebuildInsteadOfTimingOut() {
        SimCluster c = cluster(11);
        c.world.breakProbability = 0; // one fault: the loss of one copy's node
        SimCluster.Writer w = openFirst(c);
        // A queue that takes longer to copy (7 messages per block) than the 5 request timeouts
        // (10 s) a mutation may wait for a rebuild to start.
        int backlog = 20_000;
        for (int i = 0; i < backlog; i += 500) {
            List<CompletableFuture<Ack>> batch = new ArrayList<>();
            for (int j = i; j < i + 500; j++) {
                batch.add(w.core.put(w.replica, ("b" + j).getBytes(), 0, 0, new byte[0], new byte[1]));
            }
            for (CompletableFuture<Ack> f : batch) {
                Ack a = c.await(f, 30_000);
                assertThat(a.isOk()).as(a + "\n" + c.tail()).isTrue();
            }
        }
        List<CompletableFuture<Ack>> inFlight = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            inFlight.add(w.core.put(w.replica, ("late" + i).getBytes(), 0, 0, new byte[0], new byte[1]));
        }
        String lost = w.replica.syncNodes().get(1);
        long crashedAt = c.world.now;
        c.world.crash(lost);
        // Applied on the survivor, not answered by the lost copy: acknowledged once the rebuild has
        // put them on a second copy (they ended TIMEOUT, "outcome unknown", after 10 s before).
        for (CompletableFuture<Ack> f : inFlight) {
            Ack a = c.await(f, 300_000);
            assertThat(a.isOk()).as(a + "\n" + c.tail()).isTrue();
        }
        long waited = (c.world.now - crashedAt) / SimCluster.MS;
        System.out.println("puts in flight at the loss of " + lost + " acknowledged after " + waited + " ms (virtual)");
        assertThat(waited).as("the rebuild outlasted the 10 s a parked mutation used to wait").isGreaterThan(10_000);
        c.run(1_000);
        assertThat(w.replica.syncNodes()).hasSize(2).doesNotContain(lost);
        for (String n : w.replica.syncNodes()) {
            assertThat(liveOn(c, n)).as("messages on " + n).isEqualTo(backlog + 20);
        }
    }
}
