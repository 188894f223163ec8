package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 12 item 9 / issue 10: the replication client must not declare healthy nodes lost because
 * it is itself behind (report/latency.md, "Where the tail comes from", point 7: in open-loop load
 * the benchmark JVM fell behind, its heartbeats were judged late, both paths were marked NG and
 * writes failed while the servers were 3-16 % busy). Two copies on two real in-process servers,
 * default timings (heartbeat timeout 1.5 s, request timeout 2 s), a steady writer:
 * <ul>
 * <li>the client's core thread stands still for 3 heartbeat timeouts (a task blocking its event
 * loop: what a long GC pause or CPU starvation does to it) while both servers are healthy;</li>
 * <li>every answer of both nodes on the path that carries the data reaches the client later and
 * later, up to 1.5 request timeouts late, while answers keep arriving (a backlog in front of the
 * client's reading: the PINGs wait behind the data), under an open-loop writer;</li>
 * <li>a writer offers far more than the replication can complete (answers 100 ms late, a small
 * {@code maxCallsInside}): it is held back (back-pressure), not failed.</li>
 * </ul>
 * In all three, no path may be marked NG, no put may fail, nothing may be rebuilt, and every
 * acknowledged put is on both copies. (That real silence is still detected is what
 * {@link AnswersDelayedTest}, {@link ActivePathCutTest} and {@link KillNineEachNodeTest} prove.)
 */
class ClientBehindTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.behind";
    private static final Duration EVENT_WAIT = Duration.ofSeconds(60);
    /** Events that mean the replication judged a healthy node or path failed. */
    private static final Predicate<String> JUDGED_FAILED = e -> e.contains(" NG") || e.contains("failed")
            || e.contains("lost") || e.contains("isolate") || e.contains("rebuild") || e.contains("reopened")
            || e.contains("reclaim") || e.contains("ALARM") || e.contains("fenced") || e.contains("is back");

    @Test
    void aClientThatStandsStillForThreeHeartbeatTimeoutsDeclaresNoHealthyNodeLost() throws Exception {
        KvsQueue q = startAndOpenWriter(c -> c);
        PutLoad load = new PutLoad(ledger, Map.of(Q, q), "p-", 32, 1024, 1_000_000, 400);
        load.awaitAcknowledged(200, EVENT_WAIT);
        int mark = cluster.events.size();

        long pauseMillis = cluster.config.heartbeatTimeout().toMillis() * 3;
        // The core's event loop runs this task and nothing else meanwhile: no tick, no I/O, no calls.
        CompletableFuture<Void> stood = cluster.opener.onCore(c -> {
            try {
                Thread.sleep(pauseMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return CompletableFuture.completedFuture(null);
        });
        stood.get(EVENT_WAIT.toSeconds(), TimeUnit.SECONDS);
        System.out.println("the replication core stood still for " + pauseMillis + " ms; discounted as its own pause: "
                + cluster.opener.pausedMillis() + " ms");

        // Past the pause by a heartbeat timeout and more: the writer goes on and is acknowledged.
        long acked = load.acknowledged();
        load.awaitAcknowledged(acked + 1_000, EVENT_WAIT);
        assertAllWellSince(mark, load, q, "core stood still " + pauseMillis + " ms");
        assertThat(cluster.opener.pausedMillis()).as("the stand-still was seen as the client's own pause")
                .isGreaterThanOrEqualTo(pauseMillis - 2 * cluster.config.tick().toMillis());
    }

    @Test
    void answersQueuedBehindDataKeepTheirPathAlive() throws Exception {
        KvsQueue q = startAndOpenWriter(c -> c);
        // Open loop (a window far above rate x delay): requests leave steadily, so answers come
        // back steadily however late they are, as in the open-loop benchmark.
        PutLoad load = new PutLoad(ledger, Map.of(Q, q), "d-", 1_500, 1024, 1_000_000, 200);
        load.awaitAcknowledged(200, EVENT_WAIT);
        int mark = cluster.events.size();

        // Every answer of both nodes on their active path (the one that carries the data, where the
        // PINGs wait behind it) is held longer and longer (100 ms more at each
        // step, so answers never stop arriving for longer than a step), up to 1.5 request timeouts:
        // PING answers then come well past the heartbeat timeout, each request's answer past the
        // request timeout, but the nodes never fall silent.
        long maxDelay = cluster.config.requestTimeout().toMillis() * 3 / 2;
        long delay = 0;
        while (delay < maxDelay) {
            delay += 100;
            setDelay(Duration.ofMillis(delay));
            Thread.sleep(150); // the ramp's own pace, not a wait for work
        }
        long ackedAtMax = load.acknowledged();
        System.out.println("answers of both nodes on ACTIVE now " + delay + " ms late; acknowledged so far " + ackedAtMax);
        // Held at the maximum until answers sent with it came back (answers keep flowing meanwhile).
        load.awaitAcknowledged(ackedAtMax + 64, EVENT_WAIT);
        setDelay(Duration.ZERO);
        System.out.println("answers on time again");

        long acked = load.acknowledged();
        load.awaitAcknowledged(acked + 1_000, EVENT_WAIT);
        assertAllWellSince(mark, load, q, "answers up to " + delay + " ms late");
    }

    @Test
    void aWriterFasterThanTheReplicationIsHeldBackNotFailed() throws Exception {
        int room = 64;
        KvsQueue q = startAndOpenWriter(c -> c.withMaxCallsInside(room));
        int mark = cluster.events.size();
        // Every answer 100 ms late: the replication completes at most room / 0.1 s calls per second,
        // while the writer offers as fast as it can, with far more than the room in flight.
        setDelay(Duration.ofMillis(100));
        PutLoad load = new PutLoad(ledger, Map.of(Q, q), "b-", 5_000, 1024, 2_000);
        load.awaitAcknowledged(2_000, EVENT_WAIT);
        setDelay(Duration.ZERO);
        System.out.println("callers held for room (" + room + " calls inside): " + cluster.opener.heldCallers());
        assertThat(cluster.opener.heldCallers()).as("the writer was held back by the bound on calls inside").isPositive();
        assertAllWellSince(mark, load, q, "writer held back at " + room + " calls inside");
    }

    /** Two proxied nodes holding {@link #Q}'s copies ({@code tune} on top), and the writer james-a's open of it. */
    private KvsQueue startAndOpenWriter(UnaryOperator<ReplicationConfig> tune) throws Exception {
        cluster = new ProxiedCluster(dir, 2, c -> tune.apply(c)
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        return cluster.openWriter(Q, "james-a");
    }

    private void setDelay(Duration d) {
        for (String node : List.of("kvs1", "kvs2")) {
            cluster.delayAnswers(node, NodePath.ACTIVE, d);
        }
    }

    private void assertAllWellSince(int mark, PutLoad load, KvsQueue q, String where) throws Exception {
        load.finish(EVENT_WAIT);
        List<String> judged = cluster.eventsMatching(mark, JUDGED_FAILED);
        System.out.println(where + ": events since the fault " + cluster.eventsMatching(mark, e -> true)
                + "; failures " + ledger.failures() + "; backstop outcomes " + cluster.opener.backstopOutcomes());
        assertThat(judged).as("healthy nodes or paths judged failed").isEmpty();
        assertThat(ledger.failures()).as("puts that failed").isEmpty();
        assertThat(cluster.opener.backstopOutcomes()).isZero();
        ManagementTable t = cluster.opener.managementTable();
        assertThat(t.nodes().values()).allSatisfy(paths -> assertThat(paths).containsOnly(NetState.READY));
        List<String> copies = cluster.awaitTwoSyncCopies(Q, EVENT_WAIT);
        assertThat(copies).containsExactlyInAnyOrder("kvs1", "kvs2");
        for (String node : copies) {
            assertCopyWhole(where, node, Q);
        }
        PutLedger.Check read = ledger.check(where + ", reader", Q, ClusterRig.readAll(q));
        assertThat(read.lost()).isZero();
    }
}
