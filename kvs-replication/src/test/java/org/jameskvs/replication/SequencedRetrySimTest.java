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
        SimCluster c = new SimCluster(31, 2, 1, pool.forQueue(Q));
        c.world.trace = new ArrayList<>();
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        for (int i = 0; i < 5; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
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
}
