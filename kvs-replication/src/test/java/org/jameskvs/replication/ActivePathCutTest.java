package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, fault 1, on real servers with the default timings: the ACTIVE path of one node of a
 * queue's pair fails while its standby path is fine, on an idle queue and under load. The path
 * switch must be the whole story: the writer sees no failure, no copy is isolated, none rebuilt
 * (a third node is free for a rebuild, so a wrongful isolation would show), and every acknowledged
 * put is on both copies, in put order.
 *
 * <p>Two ways a path fails: FROZEN (nothing flows, nothing closes: only heartbeats and request
 * timeouts tell) and CUT (connections reset, new ones refused: seen at once).
 */
class ActivePathCutTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.pathcut";
    private static final Duration EVENT_WAIT = Duration.ofSeconds(60);

    enum Fault { FROZEN, CUT }

    @ParameterizedTest(name = "{0} active path of a copy, {1} queue")
    @CsvSource({"FROZEN, idle", "FROZEN, busy", "CUT, idle", "CUT, busy"})
    void theStandbyPathTakesOverWithoutIsolatingTheCopy(Fault fault, String traffic) throws Exception {
        cluster = new ProxiedCluster(dir, 3, c -> c
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        boolean busy = traffic.equals("busy");
        Map<String, KvsQueue> queues = Map.of(Q, q);
        putBatch(queues, "before-", 100);

        int mark = cluster.events.size();
        PutLoad load = busy ? new PutLoad(ledger, queues, "during-", 32, 1024, 1_000_000) : null;
        if (busy) {
            load.awaitAcknowledged(200, EVENT_WAIT);
        }
        breakPath(fault, true);
        String switched = cluster.awaitEvent(mark, e -> e.contains("kvs1 reopened on STANDBY") || isolationOrWorse(e),
                EVENT_WAIT, "kvs1 reopened on its standby path (or worse)");
        assertThat(switched).contains("kvs1 reopened on STANDBY");
        if (busy) {
            load.awaitAcknowledged(load.acknowledged() + 200, EVENT_WAIT); // the queue goes on over the standby path
        } else {
            putBatch(queues, "switched-", 100);
        }
        int mended = cluster.events.size();
        breakPath(fault, false);
        cluster.awaitEvent(mended, e -> e.contains("kvs1/ACTIVE READY again"), EVENT_WAIT, "kvs1's active path back");
        if (busy) {
            load.awaitAcknowledged(load.acknowledged() + 200, EVENT_WAIT);
            load.finish(EVENT_WAIT);
        }
        putBatch(queues, "after-", 100);

        assertThat(cluster.awaitTwoSyncCopies(Q, EVENT_WAIT)).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(cluster.eventsMatching(mark, ActivePathCutTest::isolationOrWorse)).as("no copy isolated, none rebuilt")
                .isEmpty();
        assertThat(ledger.failures()).as("puts that failed across the path switch").isEmpty();
        String where = fault + " active path, " + traffic;
        for (String node : List.of("kvs1", "kvs2")) {
            assertCopyWhole(where, node, Q);
        }
        PutLedger.Check read = ledger.check(where + ", reader", Q, ClusterRig.readAll(q));
        assertThat(read.lost()).isZero();
        assertThat(read.orderBreaks()).isZero();
    }

    /** Events that mean more than a path switch: a copy given up, rebuilt, or the queue's state in doubt. */
    private static boolean isolationOrWorse(String e) {
        return e.contains("isolate") || e.contains("rebuild") || e.contains("lost (") || e.contains("ALARM")
                || e.contains("DATA LOSS") || e.contains("reclaiming") || e.contains("fenced");
    }

    private void breakPath(Fault fault, boolean on) {
        switch (fault) {
            case FROZEN -> cluster.freeze("kvs1", NodePath.ACTIVE, on);
            case CUT -> cluster.cut("kvs1", NodePath.ACTIVE, on);
        }
        System.out.println((on ? "fault on: " : "fault off: ") + fault + " kvs1/ACTIVE");
    }

    private void putBatch(Map<String, KvsQueue> queues, String prefix, int n) throws InterruptedException {
        new PutLoad(ledger, queues, prefix, 16, 1024, n).awaitOutcomes(EVENT_WAIT);
    }
}
