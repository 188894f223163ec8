package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10 item 3 (the writer's side of the commit point), on real servers: a PUT that reached one
 * copy only (the other node frozen, no third node to rebuild on, so the put fails as "outcome
 * unknown": on the intake queue a 4xx and a retry) is never returned by the writer's READ or GET:
 * not while it is in flight, not once it failed, not after the frozen node came back and was
 * rebuilt from the copy holding it. Mail put before and after is read in
 * order, once. The writer then undoes it on the copies ({@code UndoFailedPutTest} for later writers).
 */
class UncommittedPutHiddenTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.uncommitted";

    @Test
    void aPutOnOneCopyOnlyIsNeverReadNorGot() throws Exception {
        cluster = new ProxiedCluster(dir, 2, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(800), Duration.ofMillis(1000))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = "before-" + i;
            assertThat(put(q, id).get(30, TimeUnit.SECONDS).isOk()).isTrue();
            expected.add(id);
        }

        int mark = cluster.events.size();
        cluster.freezeNode("kvs2", true);
        CompletableFuture<Ack> lost = put(q, "lost");
        // In flight (kvs1 applied it, kvs2 is silent): not shown.
        cluster.awaitOnCopy("kvs1", Q, "lost");
        assertThat(lost).isNotDone();
        assertThat(readAll(q)).as("while the put is in flight").containsExactlyElementsOf(expected);
        assertThat(q.get(b("lost")).get(30, TimeUnit.SECONDS).status()).isEqualTo(Status.NOT_FOUND);

        Ack failed = lost.get(60, TimeUnit.SECONDS);
        assertThat(failed.isOk()).as("the put with one copy and no node to rebuild on: %s", failed).isFalse();
        assertThat(readAll(q)).as("once the put failed").containsExactlyElementsOf(expected);

        cluster.freezeNode("kvs2", false);
        cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60)); // kvs2 rebuilt from kvs1
        assertThat(cluster.eventsMatching(mark, e -> e.contains("rebuild kvs2 from kvs1"))).isNotEmpty();
        cluster.awaitEvent(mark, e -> e.contains("undo of failed PUT lost: done on both copies"), Duration.ofSeconds(60),
                "the undo of the failed PUT acknowledged");
        assertThat(cluster.readCopy("kvs1", Q)).as("undone on kvs1").doesNotContain("lost");
        assertThat(cluster.readCopy("kvs2", Q)).as("undone on kvs2, or never copied there").doesNotContain("lost");
        for (int i = 0; i < 5; i++) {
            String id = "after-" + i;
            Ack a = put(q, id).get(30, TimeUnit.SECONDS);
            assertThat(a.isOk()).as("put %s: %s", id, a).isTrue();
            expected.add(id);
        }
        assertThat(readAll(q)).as("after the failure was resolved").containsExactlyElementsOf(expected);
        GetResult g = q.get(b("lost")).get(30, TimeUnit.SECONDS);
        assertThat(g.status()).as("GET after the failure was resolved").isEqualTo(Status.NOT_FOUND);
    }

    private static CompletableFuture<Ack> put(KvsQueue q, String id) {
        return q.put(b(id), 0, 0, new byte[0], b("body " + id));
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Every id the writer's reader sees from position 0, in blocks of 3 (a READ stops before a put in flight). */
    private static List<String> readAll(KvsQueue q) throws Exception {
        return ClusterRig.readIds(from -> q.read(from, 3, 1 << 20, 0), false);
    }
}
