package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A double fault: the node holding the only in-sync copy loses its disk while the node of the other
 * copy is down. Two real server processes: kvs1 is killed (the writer isolates it; kvs2 holds the
 * only in-sync copy, writes are refused: no second node), then kvs2 is killed and restarted on an
 * empty data directory. Its server answers with a new store id, so the writer knows the copy is
 * gone instead of re-basing on an empty one (what it did before store ids: every acknowledged
 * message lost, and kvs1 rebuilt from nothing once back). The queue waits: writes fail; the writer's
 * James then stops and, restarted, is refused too; once kvs1 is back the restarted owner finds the
 * queue there and kvs2 is rebuilt from it: acknowledged N, lost 0.
 *
 * <p>The first James is closed before the restarted one opens: two live processes with the same
 * owner name fence each other (each open takes an epoch above the highest it saw), so with both
 * alive the outcome depended on how the second open's fence fell between the first writer's own
 * reclaim steps (a run under load had the first writer fenced, rightly, and never back).
 */
class WipedWhilePartnerDownTest extends ClusterRigTest<ProcessCluster> {
    private static final String Q = "spool.double";
    private static final Duration WAIT = Duration.ofSeconds(90);

    @Test
    void theOnlyCopyWipedWhileItsPartnerIsDownWaitsForThePartner() throws Exception {
        cluster = new ProcessCluster(dir, 2, c -> c);
        KvsQueue q = cluster.openWriter(Q, "james-a");
        new PutLoad(ledger, Map.of(Q, q), "backlog-", 32, 1024, 2_000).awaitOutcomes(WAIT);
        assertThat(ledger.failures()).isEmpty();
        assertThat(ledger.acknowledged(Q)).isEqualTo(2_000);

        int mark = cluster.events.size();
        cluster.kill9("kvs1");
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": isolate kvs1"), WAIT, "kvs1 isolated");
        cluster.kill9("kvs2");
        cluster.wipe("kvs2");
        cluster.restart("kvs2");
        String avoided = cluster.awaitEvent(mark, e -> e.startsWith(Q + ": kvs2 lost its disk") && e.contains("while it held the only in-sync copy"), WAIT,
                "the emptied copy recognised");
        System.out.println(avoided);
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(Q) && e.contains("re-based")))
                .as("the empty copy is never taken for the queue").isEmpty();

        Ack refused = q.put("while-waiting".getBytes(), 0, 0, new byte[0], new byte[16]).join();
        assertThat(refused.isOk()).as("a put while no copy of the queue's content is reachable").isFalse();
        q.close(); // the writer's James stops
        OpenResult restarted = cluster.opener.open(Q, OpenOptions.writer("james-a", 1)).join();
        assertThat(restarted.isOk()).as("a restarted owner's open while kvs1 is down: " + restarted.reason()).isFalse();

        cluster.restart("kvs1");
        q = cluster.openWriter(Q, "james-a"); // the restarted owner again, retrying until kvs1 answers
        List<String> copies = cluster.awaitTwoSyncCopies(Q, WAIT);
        assertThat(copies).containsExactlyInAnyOrder("kvs1", "kvs2");
        System.out.println("events: " + cluster.eventsMatching(mark, e -> e.startsWith(Q)));
        for (String node : copies) {
            PutLedger.Check c = ledger.check("copy on " + node, Q, cluster.readCopy(node, Q));
            assertThat(c.acknowledged()).isEqualTo(2_000);
            assertThat(c.lost()).as("acknowledged puts missing on " + node).isZero();
            assertThat(c.orderBreaks()).isZero();
        }
        PutLedger.Check read = ledger.check("reader", Q, ClusterRig.readAll(q));
        assertThat(read.lost()).isZero();
        assertThat(cluster.opener.backstopOutcomes()).as("calls the state machine gave no outcome").isZero();
    }
}
