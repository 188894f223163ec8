package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One sequence per queue, on the simulated network: a copy applies a put whose answer is lost
 * (its path keeps taking requests, its answers never come back). The writer switches paths and
 * sends the put again with the same seq: the server answers it from the stored outcome, so it is
 * applied once, never refused as a duplicate, and no copy is isolated or rebuilt. On the real
 * servers ({@link RealNode}): what each one applied and answered is in the world's trace.
 */
class SequencedRetrySimTest extends RealNodeSimulation {
    private static final String Q = "mail.example.com";

    @Test
    void aRetryAfterALostAnswerIsARepeatNotADuplicate() {
        SimCluster c = openedWithFivePuts(31);
        SimCluster.Writer w = c.writers.get(0);
        c.world.holdAnswers("kvs1", NodePath.ACTIVE);
        CompletableFuture<Ack> put = w.core.put(w.replica, "m5".getBytes(), 0, 0, new byte[0], "body5".getBytes());
        Ack a = c.await(put, 30_000);

        assertThat(a.isOk()).as(a + "\n" + c.tail()).isTrue();
        assertThat(c.log).as("the path switch happened").anySatisfy(e -> assertThat(e).contains("kvs1/ACTIVE failed"));
        List<String> putsOfM5 = c.world.trace.stream().filter(l -> l.contains(">kvs1/") && l.contains(" PUT ")
                && l.contains("id=m5 ")).toList();
        assertThat(putsOfM5).as("sent on the active path, then again with the same seq on the standby path")
                .hasSize(2).allMatch(l -> l.contains("-> OK")).anyMatch(l -> l.contains("kvs1/STANDBY"));
        assertThat(c.world.trace).as("no DUPLICATE_ID for our own retry").noneMatch(l -> l.contains("DUPLICATE_ID"));
        long copiesOfM5 = c.world.servers.get("kvs1").view(Q).messages().stream()
                .filter(m -> Ids.show(m.id()).equals("m5")).count();
        assertThat(copiesOfM5).as("applied once").isEqualTo(1);
        c.run(3000);
        assertThat(w.replica.syncNodes()).as("no copy isolated\n" + c.tail()).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(c.log).noneMatch(e -> e.contains("isolate") || e.contains("rebuild"));
        SimNode.QueueView q1 = c.world.servers.get("kvs1").view(Q);
        SimNode.QueueView q2 = c.world.servers.get("kvs2").view(Q);
        assertThat(List.of(q1.seq(), q1.digest())).as("both copies at the same seq and digest").isEqualTo(List.of(q2.seq(), q2.digest()));
    }

    /**
     * The writer's own resend on SEQ_GAP, on real servers: six puts pipelined, the PUT of the second
     * one lost on its way to kvs1 (never applied there, never answered; the connection stays up).
     * kvs1's server refuses the next seq as a gap (SEQ_GAP with its last seq) and applies nothing
     * of it; the writer sends the suffix again from that seq, in order, on the same path. Every put
     * is acknowledged, and both copies hold every message once, in put order, at the same (seq,
     * digest): the gap was closed by the resend alone, no copy isolated, rebuilt or re-based.
     */
    @Test
    void aGapIsRefusedByTheServerAndTheWriterResendsTheSuffix() {
        SimCluster c = openedWithFivePuts(33);
        SimCluster.Writer w = c.writers.get(0);
        List<String> ids = new ArrayList<>(List.of("m0", "m1", "m2", "m3", "m4"));
        int mark = c.log.size();
        c.world.dropOnce = r -> r.node().equals("kvs1") && r.op() == NodeOp.PUT && r.id() != null
                && Ids.show(r.id()).equals("g1");
        List<CompletableFuture<Ack>> puts = new ArrayList<>();
        for (int i = 0; i < 6; i++) { // sent back to back: g2 onwards are on the wire behind the lost g1
            puts.add(w.core.put(w.replica, ("g" + i).getBytes(), 0, 0, new byte[0], ("body g" + i).getBytes()));
            ids.add("g" + i);
        }
        for (CompletableFuture<Ack> p : puts) {
            Ack a = c.await(p, 30_000);
            assertThat(a.isOk()).as(a + "\n" + c.tail()).isTrue();
        }

        assertThat(c.world.droppedRequests).as("g1's PUT to kvs1 was lost").hasSize(1);
        long lostSeq = c.world.droppedRequests.get(0).queueSeq();
        assertThat(lostSeq).as("a sequenced PUT").isPositive();
        List<String> onKvs1 = c.world.trace.stream().filter(l -> l.contains(">kvs1/") && l.contains(" PUT ")).toList();
        assertThat(onKvs1).as("kvs1's server refused the next seq as a gap, answering its last seq")
                .anySatisfy(l -> assertThat(l).contains("id=g2 seq=" + (lostSeq + 1) + "}").contains("-> SEQ_GAP")
                        .contains(" v=" + (lostSeq - 1) + " "));
        assertThat(c.log.subList(mark, c.log.size())).as("the writer resent the suffix")
                .anySatisfy(e -> assertThat(e).contains("kvs1 answered SEQ_GAP at seq " + (lostSeq - 1))
                        .contains("the suffix is sent again from " + lostSeq));
        // After the gap: the suffix from the lost seq, applied in order, each once.
        int gapAt = -1;
        for (int i = 0; i < onKvs1.size(); i++) {
            if (onKvs1.get(i).contains("-> SEQ_GAP")) {
                gapAt = i;
            }
        }
        List<String> applied = onKvs1.subList(gapAt + 1, onKvs1.size()).stream().filter(l -> l.contains("-> OK")).toList();
        List<String> resent = new ArrayList<>();
        for (String l : applied) {
            resent.add(l.replaceAll(".* id=(\\S+) seq=(\\d+)}.*", "$1@$2"));
        }
        List<String> expected = new ArrayList<>();
        for (int i = 1; i < 6; i++) {
            expected.add("g" + i + "@" + (lostSeq + i - 1));
        }
        assertThat(resent).as("the suffix g1..g5 resent from seq " + lostSeq + ", in order").isEqualTo(expected);

        c.run(3000);
        SimNode.QueueView q1 = c.world.servers.get("kvs1").view(Q);
        SimNode.QueueView q2 = c.world.servers.get("kvs2").view(Q);
        assertThat(userIds(q1)).as("kvs1: every acknowledged put once, in order").isEqualTo(ids);
        assertThat(userIds(q2)).as("kvs2: every acknowledged put once, in order").isEqualTo(ids);
        assertThat(List.of(q1.seq(), q1.digest())).as("both copies at the same seq and digest").isEqualTo(List.of(q2.seq(), q2.digest()));
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(c.log.subList(mark, c.log.size())).as("closed by the resend alone\n" + c.tail())
                .noneMatch(e -> e.contains("isolate") || e.contains("rebuild") || e.contains("ALARM") || e.contains("failed ("));
    }

    private static List<String> userIds(SimNode.QueueView v) {
        return v.messages().stream().filter(m -> !Ids.isReserved(m.id())).map(m -> Ids.show(m.id())).toList();
    }

    /**
     * Defect 1 at its root: a path switch reopens one copy at a new generation (a journaled OPEN,
     * one more transaction on that copy only). OPEN takes no seq, so the copies stay equal by
     * content, and a restarted owner keeps both as they are: no copy isolated, none rebuilt.
     */
    @Test
    void aPathSwitchOnOneCopyLeavesBothEqualForTheNextOwner() {
        SimCluster c = new SimCluster(32, 2, 1, pool.forQueue(Q));
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        for (int i = 0; i < 5; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        c.world.cut("kvs1", NodePath.ACTIVE, true);
        for (int i = 5; i < 10; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        assertThat(c.log).as("kvs1 moved to its standby path").anySatisfy(e -> assertThat(e).contains("kvs1/ACTIVE failed"));
        SimNode.QueueView q1 = c.world.servers.get("kvs1").view(Q);
        SimNode.QueueView q2 = c.world.servers.get("kvs2").view(Q);
        assertThat(q1.txn()).as("the reopen is one more transaction on kvs1 only").isNotEqualTo(q2.txn());

        w.boot(); // a restarted owner reclaims the queue
        c.run(100);
        int mark = c.log.size();
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        c.run(3000);
        List<String> after = c.log.subList(mark, c.log.size());
        assertThat(after).as("no copy rebuilt").noneMatch(e -> e.contains("copies differ") || e.contains("rebuild"));
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
    }

    /** Two real nodes, the network traced, the writer's queue opened and m0..m4 acknowledged on both copies. */
    private SimCluster openedWithFivePuts(long seed) {
        SimCluster c = new SimCluster(seed, 2, 1, pool.forQueue(Q));
        c.world.trace = new ArrayList<>();
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        for (int i = 0; i < 5; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        return c;
    }
}
