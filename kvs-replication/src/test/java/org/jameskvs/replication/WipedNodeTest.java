package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, fault 4: a KVS server process of a queue's pair is killed with SIGKILL and restarted
 * with its data directory deleted (a replaced disk, a wiped volume). Two nodes only, so the emptied
 * node itself must get the copy back: it is rebuilt from the other one and nothing acknowledged is
 * lost. Once after the node was declared down (default timings), once back so fast that the
 * heartbeat never missed it (its store id tells: the handles' re-opens are refused STORE_CHANGED).
 */
class WipedNodeTest extends ClusterRigTest<ProcessCluster> {
    private static final String Q = "spool.wiped";
    private static final Duration EVENT_WAIT = Duration.ofSeconds(90);

    @Test
    void aNodeRestartedEmptyAfterItWasDeclaredDownIsRebuilt() throws Exception {
        KvsQueue q = start(c -> c);
        int mark = cluster.events.size();
        PutLoad live = new PutLoad(ledger, Map.of(Q, q), "live-", 16, 1024, 1_000_000);
        live.awaitAcknowledged(100, EVENT_WAIT);
        cluster.kill9("kvs2");
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": isolate kvs2"), EVENT_WAIT, "kvs2 isolated");
        cluster.wipe("kvs2");
        cluster.restart("kvs2");
        System.out.println("kvs2 killed, isolated, restarted with an empty data directory");
        awaitRebuildOf(mark, "kvs2");
        // The writer kept a catch-up log since kvs2 left, but the copy that came back is empty: its
        // (seq, digest) is not one the log holds, so it is CLEARed and copied in full, not caught up.
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": rebuild kvs2 from kvs1 in full (catch-up refused: copy at seq"),
                EVENT_WAIT, "catch-up refused");
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(Q + ": rebuild of kvs2 done")))
                .noneMatch(e -> e.contains("caught up"));
        live.awaitAcknowledged(live.acknowledged() + 100, EVENT_WAIT);
        live.finish(EVENT_WAIT);
        checkBothCopies(q, "declared down, restarted empty");
    }

    @Test
    void aNodeBackEmptyBeforeTheHeartbeatMissedItIsRebuilt() throws Exception {
        // The heartbeat would notice the kill only after 60 s, and nothing is written meanwhile (no
        // lease renewals, an idle queue): the node is back, empty, before anything missed it.
        KvsQueue q = start(c -> c.withTimings(Duration.ofMillis(500), Duration.ofSeconds(60), Duration.ofSeconds(2))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20)));
        int mark = cluster.events.size();
        cluster.kill9("kvs1");
        cluster.wipe("kvs1");
        cluster.restart("kvs1");
        // The adapter's connections to kvs1 come back by themselves; their handles' re-opens name
        // kvs1's old store and are refused (STORE_CHANGED): nothing is created on the wiped node.
        // The next request tells the writer: refused STORE_CHANGED on such a handle (kvs1 lost its
        // disk), or, if it goes before the re-connection, lost with the connection (kvs1 isolated,
        // then found empty). Either way kvs1 is rebuilt in full and no reader sees it empty.
        assertThat(cluster.opener.awaitConnected(2, EVENT_WAIT)).as("the adapter back on kvs1").isTrue();
        PutLedger.Check early = ledger.check("back empty, before any write, reader", Q, ClusterRig.readAll(q));
        PutLoad live = new PutLoad(ledger, Map.of(Q, q), "live-", 16, 1024, 1_000_000);
        awaitRebuildOf(mark, "kvs1");
        System.out.println("kvs1 killed and restarted with an empty data directory; events since: "
                + cluster.eventsMatching(mark, e -> true));
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(Q + ": rebuild of kvs1 done")))
                .as("rebuilt in full").noneMatch(e -> e.contains("caught up"));
        live.awaitAcknowledged(live.acknowledged() + 100, EVENT_WAIT);
        live.finish(EVENT_WAIT);
        checkBothCopies(q, "back empty before it was missed");
        assertThat(early.lost()).as("acknowledged puts a reader could not see while kvs1 was back empty").isZero();
    }

    private KvsQueue start(UnaryOperator<ReplicationConfig> tune) throws Exception {
        cluster = new ProcessCluster(dir, 2, tune);
        KvsQueue q = cluster.openWriter(Q, "james-a");
        new PutLoad(ledger, Map.of(Q, q), "backlog-", 64, 1024, 5_000).awaitOutcomes(EVENT_WAIT);
        assertThat(ledger.failures()).isEmpty();
        return q;
    }

    private void awaitRebuildOf(int mark, String node) throws InterruptedException {
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": rebuild " + node + " from"), EVENT_WAIT, node + " rebuilt");
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": rebuild of " + node + " done"), EVENT_WAIT, node + " rebuilt");
        System.out.println("events: " + cluster.eventsMatching(mark, e -> e.startsWith(Q)));
    }

    private void checkBothCopies(KvsQueue q, String where) throws Exception {
        List<String> copies = cluster.awaitTwoSyncCopies(Q, EVENT_WAIT);
        assertThat(copies).containsExactlyInAnyOrder("kvs1", "kvs2");
        System.out.println(where + ": failures " + ledger.failures() + "; calls ended by the backstop "
                + cluster.opener.backstopOutcomes());
        assertThat(cluster.opener.backstopOutcomes()).as("calls the state machine gave no outcome").isZero();
        for (String node : copies) {
            PutLedger.Check c = ledger.check(where + ", copy on " + node, Q, cluster.readCopy(node, Q));
            assertThat(c.lost()).isZero();
            assertThat(c.orderBreaks()).isZero();
        }
        PutLedger.Check read = ledger.check(where + ", reader", Q, ClusterRig.readAll(q));
        assertThat(read.lost()).isZero();
        assertThat(read.orderBreaks()).isZero();
    }
}
