package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README, "a KVS node killed": "two nodes only: intake 4xx until it returns", at the replication
 * layer, with exactly two KVS server processes. kvs2 is killed with SIGKILL: no put is acknowledged
 * while it is down; each one gets the state machine's own failure (the put in flight at the kill
 * "outcome unknown" once its copy is lost, every later one refused at once with STORAGE_ERROR, "only
 * 1 copy can take writes", which the James side answers 4xx), never the adapter's backstop. kvs2
 * restarted on its journal: its copy is brought back, puts are acknowledged again, and both copies
 * hold every acknowledged put once, in put order, and none of the refused ones.
 */
class TwoNodesKillNineTest extends ClusterRigTest<ProcessCluster> {
    private static final String Q = "spool.twonodes";

    @Test
    void withTwoNodesPutsFailWhileOneIsDownAndSucceedOnceItReturns() throws Exception {
        cluster = new ProcessCluster(dir, 2, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(1500), Duration.ofMillis(1500))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20)));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        for (int i = 0; i < 20; i++) {
            assertThat(put(q, "before-" + i).isOk()).isTrue();
        }

        int mark = cluster.events.size();
        cluster.kill9("kvs2");
        // The put caught by the kill: never acknowledged; the state machine's own failure.
        Ack caught = put(q, "down-0");
        assertThat(caught.isOk()).as("a put with one node down: %s", caught).isFalse();
        assertThat(caught.status()).as("%s", caught).isIn(Status.TIMEOUT, Status.STORAGE_ERROR);
        assertThat(caught.reason()).as("the state machine's outcome, not the backstop's").doesNotContain("no outcome within");
        cluster.awaitEvent(mark, e -> e.contains("isolate kvs2"), Duration.ofSeconds(60), "kvs2 isolated");
        cluster.awaitEvent(mark, e -> e.contains("no node can take a second copy: writes refused"), Duration.ofSeconds(60),
                "writes refused");
        // From then on until kvs2 returns, each put is refused by the state machine at once (nothing
        // sent, no waiting for a timeout): STORAGE_ERROR, the 4xx of the James side.
        List<String> refused = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            String id = "down-" + i;
            Ack a = put(q, id);
            assertThat(a.status()).as("%s with kvs2 down: %s", id, a).isEqualTo(Status.STORAGE_ERROR);
            assertThat(a.reason()).as(id).isEqualTo("only 1 copy can take writes");
            refused.add(id);
        }
        assertThat(cluster.opener.backstopOutcomes()).as("calls ended by the backstop").isZero();

        cluster.restart("kvs2");
        cluster.awaitEvent(mark, e -> e.equals("kvs2/ACTIVE READY again"), Duration.ofSeconds(60), "kvs2 back");
        assertThat(cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60))).containsExactlyInAnyOrder("kvs1", "kvs2");
        for (int i = 0; i < 20; i++) {
            Ack a = put(q, "after-" + i);
            assertThat(a.isOk()).as("after-%d with both nodes back: %s", i, a).isTrue();
        }
        assertThat(cluster.opener.backstopOutcomes()).isZero();

        for (String node : List.of("kvs1", "kvs2")) {
            assertCopyWhole("two nodes, kvs2 killed and back", node, Q);
            assertThat(cluster.readCopy(node, Q)).as("refused puts were never stored, on %s", node)
                    .doesNotContainAnyElementsOf(refused);
        }
        assertThat(cluster.readCopy("kvs2", Q)).isEqualTo(cluster.readCopy("kvs1", Q));
    }

    private Ack put(KvsQueue q, String id) throws Exception {
        ledger.issued(Q, id);
        byte[] b = id.getBytes(StandardCharsets.UTF_8);
        Ack a = q.put(b, 0, 0, new byte[0], b).get(60, TimeUnit.SECONDS);
        ledger.outcome(id, a);
        return a;
    }
}
