package org.jameskvs.replication;

import org.jameskvs.client.OpenResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A member's node restarts (fast: the heartbeat never declared it lost) with a damaged copy: a
 * message lost, the transaction number as before, the queue flagged DAMAGED. The member's next
 * OPEN answer is the only place the writer sees it, on the simulated network.
 */
class DamagedCopySimTest {
    private static final String Q = "mail.example.com";

    private static SimCluster.Writer openOnTwoNodes(SimCluster c) {
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        OpenResult r = c.await(w.open(Q, false), 10_000);
        assertThat(r.isOk()).as(r.reason() + "\n" + c.tail()).isTrue();
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        return w;
    }

    /** The user's messages on one node's copy, in position order. */
    private static List<String> idsOn(SimCluster c, String node) {
        List<String> ids = new ArrayList<>();
        for (SimServer.Msg m : c.world.model(node).queues.get(Q).byPos.values()) {
            if (!Ids.isReserved(m.id)) {
                ids.add(new String(m.id, StandardCharsets.UTF_8));
            }
        }
        return ids;
    }

    private static void crashAndRestartLosing(SimCluster c, String node, String lostId) {
        c.world.crash(node);
        c.world.model(node).loseMessage(Q, lostId);
        c.world.restart(node, true);
    }

    @Test
    void aMemberReopenedDamagedIsIsolatedAndRebuiltFromTheIntactCopy() {
        SimCluster c = new SimCluster(21, 2, 1);
        SimCluster.Writer w = openOnTwoNodes(c);
        List<String> live = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
            live.add("m" + i);
        }
        crashAndRestartLosing(c, "kvs2", "m5");

        assertThat(c.put(w, "m10", "body10").isOk()).as("put after the restart\n" + c.tail()).isTrue();
        live.add("m10");
        c.run(5000);

        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        for (String n : List.of("kvs1", "kvs2")) {
            assertThat(idsOn(c, n)).as("messages on " + n + "\n" + c.tail()).containsExactlyElementsOf(live);
            assertThat(c.world.model(n).queues.get(Q).damaged).as(n + " damaged").isFalse();
        }
        // The lost PUT took its seq with it: the reopen's seq check sees the copy short of what it
        // answered before the DAMAGED flag is even looked at.
        assertThat(c.log).anySatisfy(e -> assertThat(e).contains("isolate kvs2", "copy reopened at seq 10, expected 11"))
                .anySatisfy(e -> assertThat(e).contains("rebuild of kvs2 done"));
    }

    @Test
    void theOnlyInSyncCopyReopenedDamagedIsKeptWithAnAlarm() {
        SimCluster c = new SimCluster(22, 2, 1);
        SimCluster.Writer w = openOnTwoNodes(c);
        for (int i = 0; i < 5; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        c.world.crash("kvs2");
        c.run(3000);
        assertThat(w.replica.syncNodes()).as(c.tail()).containsExactly("kvs1");
        crashAndRestartLosing(c, "kvs1", "m2");
        c.run(5000); // the lease renewal's record write finds the handle gone: a new OPEN

        assertThat(c.log).anySatisfy(e -> assertThat(e).contains(Q, "ALARM: only in-sync copy kvs1",
                "copy reopened at seq 7, expected 8"));
        assertThat(w.replica.syncNodes()).as("kept: nothing intact to rebuild from").containsExactly("kvs1");
        assertThat(w.core.table().rows()).anySatisfy(r -> {
            assertThat(r.node()).isEqualTo("kvs1");
            assertThat(r.note()).isEqualTo("DAMAGED");
        });

        c.world.restart("kvs2", true);
        c.run(8000);
        assertThat(w.replica.syncNodes()).as("served: a second copy rebuilt from it\n" + c.tail())
                .containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(c.put(w, "m5", "body5").isOk()).isTrue();
    }

    /**
     * A restarted owner finds two copies with the same transaction number and size, neither flagged
     * DAMAGED, but one lost a REPLACE at recovery: the counts that used to decide would call them
     * equal. (epoch, seq, digest) differ, so the copy that applied more is the source and the other
     * is rebuilt: both end with the replaced state.
     */
    @Test
    void copiesEqualByCountsButNotByDigestAreRebuilt() {
        SimCluster c = new SimCluster(23, 2, 1);
        SimCluster.Writer w = openOnTwoNodes(c);
        for (int i = 0; i < 6; i++) {
            assertThat(c.put(w, "m" + i, "body" + i).isOk()).isTrue();
        }
        byte[] newer = "retry=1".getBytes(StandardCharsets.UTF_8);
        assertThat(c.await(w.core.replace(w.replica, "m4".getBytes(StandardCharsets.UTF_8), 0, 0, newer), 30_000).isOk())
                .isTrue();
        c.run(100);
        w.boot(); // the James process restarts: it reclaims its queue
        c.world.crash("kvs1");
        c.world.model("kvs1").loseReplaceUnflagged(Q, "m4", new byte[0]);
        c.world.restart("kvs1", true);
        SimServer.SimQueue q1 = c.world.model("kvs1").queues.get(Q);
        SimServer.SimQueue q2 = c.world.model("kvs2").queues.get(Q);
        assertThat(q1.txn).as("counts cannot tell").isEqualTo(q2.txn);
        assertThat(q1.byPos.size()).isEqualTo(q2.byPos.size());
        assertThat(q1.damaged).isFalse();

        c.run(100);
        OpenResult r = c.await(w.open(Q, false), 10_000);
        assertThat(r.isOk()).as(r.reason() + "\n" + c.tail()).isTrue();
        c.run(5000);

        assertThat(c.log).anySatisfy(e -> assertThat(e).contains("copies differ", "kvs1", "kvs2"))
                .anySatisfy(e -> assertThat(e).contains("rebuild of kvs1 done"));
        assertThat(w.replica.syncNodes()).containsExactlyInAnyOrder("kvs1", "kvs2");
        for (String n : List.of("kvs1", "kvs2")) {
            SimServer.Msg m4 = c.world.model(n).queues.get(Q).byId.get(Ids.key("m4".getBytes(StandardCharsets.UTF_8)));
            assertThat(m4.state).as("m4's state on " + n).isEqualTo(newer);
        }
        w.boot(); // no lease write in flight while the copies are compared
        c.run(1000);
        q1 = c.world.model("kvs1").queues.get(Q);
        q2 = c.world.model("kvs2").queues.get(Q);
        assertThat(new long[] {q1.seq, q1.digest}).as("equal by content after the rebuild's REBASE")
                .containsExactly(q2.seq, q2.digest);
    }
}
