package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, fault 2, on real servers with the default timings (request timeout 2 s, heartbeat
 * timeout 1.5 s): for 3 s, one node of a queue's pair applies every request at once but its answers
 * reach the adapter 3 s late (a delay line in front of the node: on both paths, or on the active
 * one only). The replication gives up on the late path or node, and the puts whose answers were
 * held were applied. None of them may end as TIMEOUT ("outcome unknown": on the intake queue a 4xx,
 * the sending MTA retries, a duplicate): every put ends OK, or failed and not stored, and nothing
 * acknowledged is lost.
 *
 * <p>With three nodes the late node is isolated and a copy rebuilt on the third; with two, writes are
 * refused until the late node answers in time again and is rebuilt (the puts it held are acknowledged
 * by that rebuild).
 */
class AnswersDelayedTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.delayed";
    private static final Duration DELAY = Duration.ofSeconds(3);
    /** How long the node's answers are delayed: the fault's own length, not a wait for work. */
    private static final Duration FAULT = Duration.ofSeconds(3);
    private static final Duration EVENT_WAIT = Duration.ofSeconds(60);

    @ParameterizedTest(name = "{0} node(s), answers of kvs1 delayed on {1}")
    @CsvSource({"3, both paths", "2, both paths", "3, the active path"})
    void putsWhoseAnswersWereHeldEndOkOrNotStored(int nodes, String paths) throws Exception {
        cluster = new ProxiedCluster(dir, nodes, c -> c
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<NodePath> delayed = paths.equals("both paths") ? List.of(NodePath.ACTIVE, NodePath.STANDBY) : List.of(NodePath.ACTIVE);

        PutLoad load = new PutLoad(ledger, Map.of(Q, q), "m-", 32, 1024, 1_000_000);
        load.awaitAcknowledged(500, EVENT_WAIT);
        int mark = cluster.events.size();
        delayed.forEach(p -> cluster.delayAnswers("kvs1", p, DELAY));
        long on = System.nanoTime();
        System.out.println("answers of kvs1 on " + delayed + " delayed by " + DELAY.toMillis() + " ms");
        cluster.awaitEvent(mark, e -> e.contains("kvs1 reopened on STANDBY") || e.contains("isolate kvs1"), EVENT_WAIT,
                "the replication gave up on kvs1's late path or on kvs1");
        Thread.sleep(Math.max(0, FAULT.toMillis() - (System.nanoTime() - on) / 1_000_000));
        int ended = cluster.events.size();
        delayed.forEach(p -> cluster.delayAnswers("kvs1", p, Duration.ZERO));
        System.out.println("answers of kvs1 on time again");

        // Settled: two copies, and the load acknowledged past the fault.
        List<String> copies = cluster.awaitTwoSyncCopies(Q, EVENT_WAIT);
        long acked = load.acknowledged();
        load.awaitAcknowledged(acked + 500, EVENT_WAIT);
        load.finish(EVENT_WAIT);
        copies = cluster.awaitTwoSyncCopies(Q, EVENT_WAIT);
        System.out.println("after the fault: copies " + copies + "; events since: "
                + cluster.eventsMatching(mark, e -> e.startsWith(Q)) + "; failures " + ledger.failures()
                + "; calls ended by the backstop " + cluster.opener.backstopOutcomes() + "; events after it ended: "
                + cluster.eventsMatching(ended, e -> true).size());

        String where = nodes + " nodes, answers delayed on " + paths;
        for (String node : copies) {
            PutLedger.Check c = ledger.check(where + ", copy on " + node, Q, cluster.readCopy(node, Q));
            assertThat(c.lost()).isZero();
            assertThat(c.duplicated()).isZero();
            assertThat(c.failedButStored()).as("puts that failed (TIMEOUT: outcome unknown) but were stored").isEmpty();
            assertThat(c.orderBreaks()).isZero();
        }
        PutLedger.Check read = ledger.check(where + ", reader", Q, ClusterRig.readAll(q));
        assertThat(read.lost()).isZero();
        assertThat(read.failedButStored()).isEmpty();
        assertThat(cluster.opener.backstopOutcomes()).isZero();
        assertThat(ledger.failures()).as("puts that ended TIMEOUT (outcome unknown)").doesNotContainKey(Status.TIMEOUT);
    }
}
