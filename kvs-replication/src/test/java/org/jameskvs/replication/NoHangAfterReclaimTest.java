package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueStat;
import org.jameskvs.protocol.Status;
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
 * Issue 10, defect 2, on real servers: the only in-sync copy reopens (path switch) at a transaction
 * number it cannot have while the other copy is being rebuilt. The replication keeps it (the only
 * in-sync copy is never thrown away) and isolates the rebuild target instead; the requests queued on
 * it for resending must then be sent. They were not, so those calls ended only by the adapter's
 * backstop (6 request timeouts, "outcome unknown": on the intake queue a 4xx, a retry, a duplicate).
 *
 * <p>How the copy gets the impossible number, in the order the test controls: kvs1's active path is
 * frozen (nothing of ours reaches it), a plain client writes to kvs1's copy behind the adapter's back
 * (more writes than requests of ours can be in flight), kvs2 (the other copy) stops, a put makes the
 * adapter isolate kvs2 and rebuild kvs3 from kvs1, more puts queue up on kvs1's frozen path; only
 * then (heartbeat timeout 3 s) kvs1's path switch reopens it at the foreign number.
 */
class NoHangAfterReclaimTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.nohang";
    private static final String OWNER = "james-a";

    @Test
    void requestsQueuedOnTheKeptCopyAreSentAndEveryPutGetsTheStateMachinesOutcome() throws Exception {
        cluster = new ProxiedCluster(dir, 3, c -> c
                // Detection of kvs1's frozen path must come well after the test's own steps (ms).
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(3000), Duration.ofMillis(3000))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, OWNER);
        for (int i = 0; i < 20; i++) {
            assertThat(put(q, "before-" + i).get(30, TimeUnit.SECONDS).isOk()).isTrue();
        }

        int mark = cluster.events.size();
        cluster.freeze("kvs1", NodePath.ACTIVE, true);
        writeBehindTheAdaptersBack("kvs1", 50);
        cluster.servers.get("kvs2").close();
        List<CompletableFuture<Ack>> puts = new ArrayList<>();
        puts.add(put(q, "trigger"));
        cluster.awaitEvent(mark, e -> e.contains("rebuild kvs3 from kvs1"), Duration.ofSeconds(20), "rebuild kvs3 from kvs1");
        for (int i = 0; i < 8; i++) {
            puts.add(put(q, "during-" + i));
        }
        // kvs1 reopens on its standby path at the foreign transaction number: kept, the target isolated.
        cluster.awaitEvent(mark, e -> e.contains("ALARM") || e.contains("isolate kvs3"), Duration.ofSeconds(30),
                "kvs1 reopened at a foreign transaction number");

        // Every put ends with the state machine's own outcome (OK once re-replicated, or TIMEOUT
        // "outcome unknown" after 5 request timeouts), never the adapter's backstop.
        for (CompletableFuture<Ack> f : puts) {
            Ack a = f.get(60, TimeUnit.SECONDS);
            assertThat(a.reason() == null ? "" : a.reason()).as("outcome %s", a).doesNotContain("no outcome within");
        }
        assertThat(cluster.opener.backstopOutcomes()).as("calls answered by the backstop").isZero();

        // And the queue goes on: two copies again, puts acknowledged.
        cluster.freeze("kvs1", NodePath.ACTIVE, false);
        cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60));
        Ack after = null;
        for (int attempt = 0; attempt < 100 && (after == null || !after.isOk()); attempt++) {
            after = put(q, "after-" + attempt).get(60, TimeUnit.SECONDS);
        }
        assertThat(after.isOk()).as("a put after the repair: %s", after).isTrue();
        assertThat(cluster.opener.backstopOutcomes()).isZero();
    }

    private static CompletableFuture<Ack> put(KvsQueue q, String id) {
        return q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A plain client opens the copy on {@code node} one generation above the adapter's handle (so the
     * adapter's next OPEN, one generation or more above, still wins) and writes {@code count}
     * messages: transactions the adapter cannot account for.
     */
    private void writeBehindTheAdaptersBack(String node, int count) {
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(cluster.serverPort(node))
                .credentials("james", ProxiedCluster.PASSWORD).build())) {
            KvsQueue reader = c.open(Q, OpenOptions.reader()).join().orThrow();
            QueueStat st = reader.stat().join();
            assertThat(st.isOk()).isTrue();
            KvsQueue intruder = c.open(Q, OpenOptions.writer(OWNER, st.epoch() + 1)).join().orThrow();
            for (int i = 0; i < count; i++) {
                Ack a = intruder.put(("intruder-" + i).getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], new byte[1]).join();
                assertThat(a.status()).isEqualTo(Status.OK);
            }
        }
    }
}
