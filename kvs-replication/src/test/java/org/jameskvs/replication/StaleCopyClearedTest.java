package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.replication.ManagementTable.Row;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10 item 6, copy hygiene, on real servers: a node of the pair is cut off, its copy isolated
 * and a third node rebuilt from the survivor. When the cut-off node comes back, the writer clears
 * its stale copy there (an empty queue stays: the trace of the open), while both live copies and
 * the reader keep every acknowledged put, in order.
 */
class StaleCopyClearedTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.stale";
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void anIsolatedCopyIsClearedOnItsNodeOnceTwoCopiesAreInSyncAgain() throws Exception {
        cluster = new ProxiedCluster(dir, 3, c -> c
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        Map<String, KvsQueue> queues = Map.of(Q, q);
        put(queues, "before-", 100);

        int mark = cluster.events.size();
        cluster.cut("kvs2", NodePath.ACTIVE, true);
        cluster.cut("kvs2", NodePath.STANDBY, true);
        cluster.awaitEvent(mark, e -> e.contains("isolate kvs2"), WAIT, "kvs2 isolated");
        cluster.awaitEvent(mark, e -> e.contains("rebuild of kvs3 done"), WAIT, "kvs3 rebuilt from kvs1");
        put(queues, "after-", 50);
        assertThat(cluster.readCopy("kvs2", Q)).as("the isolated copy, still on its node while it is cut off")
                .hasSize(100);

        int healed = cluster.events.size();
        cluster.cut("kvs2", NodePath.ACTIVE, false);
        cluster.cut("kvs2", NodePath.STANDBY, false);
        cluster.awaitEvent(healed, e -> e.contains("stale copy cleared on kvs2"), WAIT, "the stale copy cleared");

        assertThat(cluster.readCopy("kvs2", Q)).as("the stale copy on kvs2").isEmpty();
        assertThat(cluster.hasQueue("kvs2", Q)).as("an empty queue stays as the trace of the open").isTrue();
        assertThat(cluster.awaitTwoSyncCopies(Q, WAIT)).containsExactlyInAnyOrder("kvs1", "kvs3");
        assertThat(cluster.opener.managementTable().rows()).filteredOn(r -> r.queue().equals(Q) && r.node().equals("kvs2"))
                .extracting(Row::note).containsExactly("isolated, stale copy cleared");
        for (String node : List.of("kvs1", "kvs3")) {
            assertCopyHolds(ledger, "after the stale copy was cleared", node, Q, 150);
        }
        PutLedger.Check read = ledger.check("reader", Q, ClusterRig.readAll(q));
        assertThat(read.lost()).isZero();
        assertThat(read.orderBreaks()).isZero();
        assertThat(cluster.eventsMatching(mark, e -> e.contains("ALARM") || e.contains("DATA LOSS"))).isEmpty();
    }

    private void put(Map<String, KvsQueue> queues, String prefix, int n) throws InterruptedException {
        new PutLoad(ledger, queues, prefix, 16, 1024, n).awaitOutcomes(WAIT);
        assertThat(ledger.failures()).as("puts that failed").isEmpty();
    }
}
