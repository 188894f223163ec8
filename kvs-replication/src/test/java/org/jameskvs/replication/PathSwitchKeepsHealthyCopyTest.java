package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, defect 1, on real servers: a write OPEN at a new generation is journaled by the server
 * and moves the queue's transaction number by one. The replication did not allow for it, so a path
 * switch of an idle copy (nothing in flight to absorb the +1) isolated a healthy copy and rebuilt it,
 * and the only in-sync copy coming back after a loss was flagged DATA LOSS and the queue reclaimed.
 */
class PathSwitchKeepsHealthyCopyTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.pathswitch";

    private ProxiedCluster start(int nodes) throws Exception {
        return new ProxiedCluster(dir, nodes, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(800), Duration.ofMillis(1000))
                // No lease renewals: the queue is idle, nothing in flight when a path fails.
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
    }

    @Test
    void freezingTheActivePathOfAnIdleCopySwitchesPathsAndKeepsTheCopy() throws Exception {
        cluster = start(3);
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> acked = putAll(q, "m-", 5);

        int mark = cluster.events.size();
        cluster.freeze("kvs1", NodePath.ACTIVE, true);
        String outcome = cluster.awaitEvent(mark, e -> e.contains("kvs1 reopened on STANDBY") || e.contains("isolate kvs1"),
                Duration.ofSeconds(30), "kvs1 reopened on its standby path, or isolated");
        assertThat(outcome).contains("kvs1 reopened on STANDBY");
        cluster.freeze("kvs1", NodePath.ACTIVE, false);

        acked.addAll(putAll(q, "n-", 5)); // the queue goes on with both copies
        assertThat(cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(10))).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(cluster.eventsMatching(mark, e -> e.contains("isolate") || e.contains("rebuild") || e.contains("ALARM")))
                .as("no copy isolated, none rebuilt").isEmpty();
        assertThat(readIds(q)).containsExactlyElementsOf(acked);
    }

    @Test
    void theOnlyInSyncCopyComingBackAfterALossIsNotFlaggedAsDataLoss() throws Exception {
        cluster = start(2); // no third node: kvs1 stays the only copy once kvs2 is isolated
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> acked = putAll(q, "m-", 5);

        int mark = cluster.events.size();
        cluster.freezeNode("kvs2", true);
        cluster.awaitEvent(mark, e -> e.contains("no node can take a second copy"), Duration.ofSeconds(30),
                "kvs2 isolated, no replacement");
        cluster.freezeNode("kvs1", true);
        cluster.awaitEvent(mark, e -> e.contains("kvs1 lost"), Duration.ofSeconds(30), "kvs1 lost (the authority)");
        cluster.freezeNode("kvs1", false);
        cluster.freezeNode("kvs2", false);
        String back = cluster.awaitEvent(mark, e -> e.contains("kvs1 is back") || e.contains("DATA LOSS"),
                Duration.ofSeconds(30), "kvs1 back");
        assertThat(back).contains("kvs1 is back");

        assertThat(cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(30))).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(cluster.eventsMatching(mark, e -> e.contains("DATA LOSS") || e.contains("reclaiming") || e.contains("ALARM")))
                .isEmpty();
        acked.addAll(putAll(q, "n-", 5));
        assertThat(readIds(q)).containsExactlyElementsOf(acked);
    }

    /** Puts {@code n} messages, each retried (bounded) until acknowledged: the copies may be settling. */
    private static List<String> putAll(KvsQueue q, String prefix, int n) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = prefix + i;
            Ack a = null;
            for (int attempt = 0; attempt < 100 && (a == null || !a.isOk()); attempt++) {
                if (a != null) {
                    Thread.sleep(100);
                }
                a = q.putReplacing(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8))
                        .get(30, TimeUnit.SECONDS);
            }
            assertThat(a.isOk()).as("put %s: %s", id, a).isTrue();
            ids.add(id);
        }
        return ids;
    }

    private static List<String> readIds(KvsQueue q) throws Exception {
        List<String> ids = new ArrayList<>();
        ReadResult rr = q.read(0, 1000, 1 << 20, 0).get(30, TimeUnit.SECONDS);
        assertThat(rr.isOk()).as("read: %s", rr.reason()).isTrue();
        for (StoredMessage m : rr.messages()) {
            ids.add(new String(m.id(), StandardCharsets.UTF_8));
        }
        return ids;
    }
}
