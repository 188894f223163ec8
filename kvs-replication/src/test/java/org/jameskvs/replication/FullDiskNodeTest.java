package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node whose store refuses writes (its journal at {@code journal.maxBytes}: DISK_FULL, as a full
 * disk answers) on real server processes:
 * <ul>
 *   <li>with a third node, the copy on the full node is isolated when it refuses a PUT the other copy
 *       took, the second copy goes to the third node, and puts are acknowledged on two copies again;</li>
 *   <li>with two nodes, the full copy stays (the PUT fails and is undone: {@code FullNodesDrainTest}
 *       drains such a queue), and a rebuild onto a full node (here: the node came back on an empty disk
 *       too small for the queue) is retried after a growing wait (1 s, doubling up to 30 s:
 *       {@code RecordAndRebuild.storeRefused}), not at once (before: about twice a second per queue,
 *       each with its log lines, for as long as the disk stayed full); once the node has room again the
 *       queue has two copies again.</li>
 * </ul>
 * Every acknowledged put is on both final copies, once, in order.
 */
class FullDiskNodeTest extends ClusterRigTest<ProcessCluster> {
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** Small enough to fill in about 300 puts of 1 KiB (each also journals its id, headers, the record's renewals). */
    private static final String LIMIT = "journal.maxBytes=" + (384 * 1024);
    /** A journal a third of that size: what {@link #LIMIT} held does not fit. */
    private static final String SMALLER = "journal.maxBytes=" + (128 * 1024);
    /** How long the two-node test watches the rebuild attempts onto the full node. */
    private static final Duration WATCH = Duration.ofSeconds(10);

    @Test
    void withAThirdNodeTheSecondCopyMovesThereAndPutsAreAcknowledgedAgain() throws Exception {
        String q = "full-disk-3";
        List<String> pair = startWithSecondOfPairLimited(3, q);
        String keeper = pair.get(0);
        String full = pair.get(1); // the first node the replacement rule names after the keeper: it would be chosen again
        String third = cluster.config.nodes().stream().map(ReplicationConfig.NodeSpec::name)
                .filter(n -> !pair.contains(n)).findFirst().orElseThrow();

        KvsQueue writer = cluster.openWriter(q, "james-a");
        assertThat(cluster.awaitTwoSyncCopies(q, WAIT)).containsExactlyInAnyOrderElementsOf(pair);
        int mark = cluster.events.size();
        fillUntilRefused(q, writer, full, mark);

        List<String> copies = cluster.awaitTwoSyncCopies(q, WAIT);
        assertThat(copies).as("the second copy left the full node").containsExactlyInAnyOrder(keeper, third);
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(q + ": rebuild " + full + " from")))
                .as("no rebuild onto the full node while it waits").isEmpty();

        assertThat(putsAfter(q, writer)).as("puts acknowledged on %s and %s", keeper, third).isEqualTo(500);
        assertAllAcknowledgedOn(q, keeper, third);
    }

    @Test
    void withTwoNodesTheFullCopyStaysAndARebuildOntoAFullNodeWaitsLongerEachTimeAndCompletesOnceItHasRoom() throws Exception {
        String q = "full-disk-2";
        List<String> pair = startWithSecondOfPairLimited(2, q);
        String keeper = pair.get(0);
        String full = pair.get(1);

        KvsQueue writer = cluster.openWriter(q, "james-a");
        cluster.awaitTwoSyncCopies(q, WAIT);
        int mark = cluster.events.size();
        fillUntilRefused(q, writer, full, mark);
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(q + ": isolate ") || e.startsWith(q + ": rebuild ")))
                .as("with no other node, the full copy stays: no isolation, no rebuild").isEmpty();
        assertThat(cluster.awaitTwoSyncCopies(q, WAIT)).containsExactlyInAnyOrderElementsOf(pair);
        assertAllAcknowledgedOn(q, keeper, full);

        // The node comes back on an empty disk with a third of the journal: the queue does not fit, so
        // every rebuild onto it is refused.
        mark = cluster.events.size();
        cluster.kill9(full);
        cluster.awaitEvent(mark, e -> e.equals(full + "/ACTIVE NG"), WAIT, full + " down");
        cluster.wipe(full);
        cluster.configure(full, SMALLER);
        mark = cluster.events.size();
        cluster.restart(full);
        int refusedAt = cluster.awaitEventIndex(mark, e -> e.startsWith(q + ": " + full + " refused a write (DISK_FULL)"),
                WAIT, "the rebuild onto " + full + " refused for its full journal");

        // Attempts onto the full node come 1, 2, 4, 8 s apart (or later on a slow machine, never
        // sooner; the first wait may already be longer, left from the refusals while filling): at most
        // 3 begin within 10 s of the first refusal. One more is allowed for an attempt ended by
        // something other than the store (a heartbeat lost under load), after which the next one need
        // not wait. Without the wait: about 20.
        long watchEnd = cluster.eventNanos(refusedAt) + WATCH.toNanos();
        while (System.nanoTime() < watchEnd) {
            Thread.sleep(100);
        }
        List<String> attempts = new java.util.ArrayList<>();
        List<Long> waits = new java.util.ArrayList<>();
        for (int i = refusedAt; i < cluster.events.size() && cluster.eventNanos(i) <= watchEnd; i++) {
            String e = cluster.events.get(i);
            if (e.startsWith(q + ": rebuild " + full + " from")) {
                attempts.add(e);
            }
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile(java.util.regex.Pattern.quote(q + ": " + full + " refused a write (DISK_FULL): no rebuild onto it for ") + "(\\d+) ms")
                    .matcher(e);
            if (m.matches()) {
                waits.add(Long.parseLong(m.group(1)));
            }
        }
        System.out.println("rebuild attempts onto " + full + " within " + WATCH.toSeconds() + " s of its refusal: "
                + attempts.size() + ", waits " + waits);
        assertThat(attempts).as("rebuilds onto the full node within %s s", WATCH.toSeconds()).hasSizeLessThanOrEqualTo(4);
        assertThat(waits).as("each wait announced once, each longer than the last").isNotEmpty().isSorted()
                .doesNotHaveDuplicates();

        // Room again (the operator gave it a larger disk): the node restarts without the limit.
        restartWith(full);
        cluster.awaitTwoSyncCopies(q, WAIT);
        assertThat(putsAfter(q, writer)).as("puts acknowledged on %s and %s", keeper, full).isEqualTo(500);
        assertAllAcknowledgedOn(q, keeper, full);
    }

    /** Starts the cluster, then restarts the second node of {@code q}'s pair with the small journal: @return the pair. */
    private List<String> startWithSecondOfPairLimited(int nodes, String q) throws Exception {
        cluster = new ProcessCluster(dir, nodes, c -> c);
        List<String> pair = new Placement(cluster.config).pair(q);
        restartWith(pair.get(1), LIMIT);
        return pair;
    }

    /** Puts 1 KiB bodies until the full node's refusal is seen (bounded); returns the event's index. */
    private int fillUntilRefused(String q, KvsQueue writer, String full, int mark) throws Exception {
        try (PutLoad fill = new PutLoad(ledger, Map.of(q, writer), "fill-", 8, 1024, 5_000)) {
            int i = cluster.awaitEventIndex(mark, e -> e.startsWith(q + ": " + full + " refused a write (DISK_FULL)"),
                    WAIT, full + " refuses for its full journal");
            fill.finish(WAIT);
            assertThat(ledger.acknowledged(q)).as("acknowledged before the journal filled").isPositive();
            return i;
        }
    }

    /** 500 puts of 1 KiB; returns how many were acknowledged. */
    private long putsAfter(String q, KvsQueue writer) throws InterruptedException {
        try (PutLoad after = new PutLoad(ledger, Map.of(q, writer), "after-", 32, 1024, 500)) {
            after.awaitOutcomes(WAIT);
            return after.acknowledged();
        }
    }

    private void restartWith(String node, String... properties) throws Exception {
        int mark = cluster.events.size();
        cluster.kill9(node);
        cluster.awaitEvent(mark, e -> e.equals(node + "/ACTIVE NG"), WAIT, node + " down");
        cluster.configure(node, properties);
        mark = cluster.events.size();
        cluster.restart(node);
        cluster.awaitEvent(mark, e -> e.equals(node + "/ACTIVE READY again"), WAIT, node + " back");
    }

    private void assertAllAcknowledgedOn(String q, String... nodes) {
        for (String n : nodes) {
            assertCopyWhole("after the full node", n, q);
        }
    }
}
