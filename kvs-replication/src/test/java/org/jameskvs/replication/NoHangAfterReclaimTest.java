package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.LogCapture;
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
 *
 * <p>What it proves (README: "the only in-sync copy returns with another transaction number: kept
 * (ALARM), the other copy rebuilt; no call hangs"): the ALARM names kvs1 as the copy kept and
 * re-based and is logged as a WARN; kvs3 (the other copy) is isolated, kvs1 never; every put gets
 * the state machine's outcome, none TIMEOUT, the backstop never used; the two copies at the end are
 * kvs1 and kvs3, and kvs3 holds exactly kvs1's messages in kvs1's order, the writes only kvs1 had
 * included (rebuilt from the kept copy).
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
        List<CompletableFuture<Ack>> puts = new ArrayList<>();
        try (LogCapture log = new LogCapture()) {
            cluster.freeze("kvs1", NodePath.ACTIVE, true);
            writeBehindTheAdaptersBack("kvs1", 50);
            cluster.servers.get("kvs2").close();
            puts.add(put(q, "trigger"));
            cluster.awaitEvent(mark, e -> e.contains("rebuild kvs3 from kvs1"), Duration.ofSeconds(20), "rebuild kvs3 from kvs1");
            for (int i = 0; i < 8; i++) {
                puts.add(put(q, "during-" + i));
            }
            // kvs1 reopens on its standby path at the foreign transaction number: kept with an ALARM
            // (an event, and a WARN line for the operator), the other copy (the rebuild target) isolated.
            int alarm = cluster.awaitEventIndex(mark, e -> e.contains("ALARM"), Duration.ofSeconds(30),
                    "ALARM: kvs1 reopened at a foreign transaction number");
            assertThat(cluster.events.get(alarm)).as("the ALARM keeps kvs1, the only in-sync copy")
                    .contains("only in-sync copy kvs1").contains("re-based");
            int isolated = cluster.awaitEventIndex(mark, e -> e.contains("isolate kvs3"), Duration.ofSeconds(30),
                    "the rebuild target kvs3 isolated");
            assertThat(cluster.events.get(isolated)).contains("disagrees with the only in-sync copy kvs1");
            log.await(l -> l.contains("WARN") && l.contains("ALARM: only in-sync copy kvs1"), 10_000,
                    "the ALARM as a WARN line");

            // No call hangs: every put ends with the state machine's own outcome, well before the
            // adapter's backstop (6 request timeouts), and none is "outcome unknown".
            for (int i = 0; i < puts.size(); i++) {
                Ack a = puts.get(i).get(60, TimeUnit.SECONDS);
                assertThat(a.status()).as("outcome %s", a).isNotEqualTo(Status.TIMEOUT);
                assertThat(a.reason() == null ? "" : a.reason()).as("outcome %s", a).doesNotContain("no outcome within");
                if (a.isOk()) {
                    acknowledged.add(idOf(i));
                }
            }
            assertThat(cluster.opener.backstopOutcomes()).as("calls answered by the backstop").isZero();
            assertThat(log.lines(l -> l.contains("call backstop used"))).isEmpty();
        }
        assertThat(cluster.eventsMatching(mark, e -> e.contains("isolate kvs1"))).as("kvs1 is never isolated").isEmpty();

        // The other copy is rebuilt from the kept one: two copies again, kvs1 one of them.
        cluster.freeze("kvs1", NodePath.ACTIVE, false);
        List<String> copies = cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60));
        assertThat(copies).containsExactlyInAnyOrder("kvs1", "kvs3");
        assertThat(cluster.eventsMatching(mark, e -> e.contains("rebuild of kvs3 done"))).isNotEmpty();
        Ack after = null;
        for (int attempt = 0; attempt < 100 && (after == null || !after.isOk()); attempt++) {
            after = put(q, "after-" + attempt).get(60, TimeUnit.SECONDS);
        }
        assertThat(after.isOk()).as("a put after the repair: %s", after).isTrue();
        assertThat(cluster.opener.backstopOutcomes()).isZero();

        // kvs1's copy was kept as it was (the writes it alone has are still there) and kvs3 holds the
        // same messages in the same order: rebuilt from kvs1, not the other way round.
        List<String> kept = cluster.readCopy("kvs1", Q);
        for (int i = 0; i < 50; i++) {
            assertThat(kept).contains("intruder-" + i);
        }
        for (int i = 0; i < 20; i++) {
            assertThat(kept).contains("before-" + i);
        }
        assertThat(kept).containsAll(acknowledged);
        assertThat(cluster.readCopy("kvs3", Q)).as("kvs3 rebuilt from kvs1").isEqualTo(kept);
    }

    private final List<String> acknowledged = new ArrayList<>();

    private static String idOf(int putIndex) {
        return putIndex == 0 ? "trigger" : "during-" + (putIndex - 1);
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
