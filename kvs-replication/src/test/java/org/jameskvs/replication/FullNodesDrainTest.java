package org.jameskvs.replication;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueStat;
import org.jameskvs.protocol.Status;
import org.jameskvs.server.storage.JournalTuning;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Both nodes of a queue fill up (their journals at {@code journal.maxBytes}), on real servers. The
 * nodes fill at different PUTs: the smaller one refuses a PUT the other takes. Before, that copy was
 * isolated for answering otherwise, and a queue with one copy refuses every write, the deletes that
 * would make room included: the queue could never drain, behind James its {@code outgoing} stayed
 * full. Now the refusal takes its seq on the full copy (a SKIP, in the store's reserve), the PUT fails
 * (DISK_FULL: James answers 4xx) and is undone on the copy that took it, and both copies stay:
 * <ul>
 *   <li>no copy isolated, no rebuild, while PUTs are refused;</li>
 *   <li>every acknowledged PUT on both copies, once, in order; no refused one on either;</li>
 *   <li>every acknowledged message deleted through the writer while the journals are full;</li>
 *   <li>PUTs taken again once the journals' dead files are gone, on both copies (no restart), at the
 *       same positions on both (the refusals left no seq gap);</li>
 *   <li>the copies' digests aligned once the queue is quiet: the same (seq, digest) on both, so a
 *       restarted writer's open keeps both (no rebuild).</li>
 * </ul>
 */
class FullNodesDrainTest extends ClusterRigTest<ProxiedCluster> {
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** A journal file starts with about 512 KiB of Chronicle's header and index; the rest is mail. */
    private static final long SMALL = 3L << 20;
    private static final long LARGER = 4L << 20;
    /**
     * 1 KiB mails, all in one journal file: the DELETEs of a whole full journal take most of the reserve
     * (an eighth of the limit; with a sixteenth, the drain fitted and the next write did not).
     */
    private static final byte[] BODY = new byte[1024];
    /**
     * The journals' clock: per-second files, and the second moves only when the test says, so all the
     * mail is in one file (the worst case: nothing dies before the drain is complete) and the next
     * file begins when the test has drained it.
     */
    private final SetTimeProvider clock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));

    @Test
    void aQueueWhoseNodesFillKeepsBothCopiesDrainsAndTakesPutsAgain() throws Exception {
        cluster = new ProxiedCluster(dir, 2, c -> c, (node, store) -> store
                .withMaxJournalBytes(node.equals("kvs1") ? SMALL : LARGER)
                .withTuning(JournalTuning.defaults().withRollCycle(TestRollCycles.TEST_SECONDLY, clock)
                        .withBlockSize(1 << 20).withCompaction(0, 0.5, 32L << 20)));
        String q = "drain";
        KvsQueue writer = cluster.openWriter(q, "james-a");
        cluster.awaitTwoSyncCopies(q, WAIT);
        int mark = cluster.events.size();

        // Fill: one PUT at a time until 50 in a row are refused (bounded).
        List<String> acked = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        Map<Status, Integer> refusals = new TreeMap<>();
        int inARow = 0;
        for (int i = 0; i < 50_000 && inARow < 50; i++) {
            String id = "fill-" + i;
            ledger.issued(q, id);
            Ack a = writer.put(id.getBytes(), 0, 0, new byte[0], BODY).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            ledger.outcome(id, a);
            if (a.isOk()) {
                acked.add(id);
                inARow = 0;
            } else {
                refused.add(id);
                refusals.merge(a.status(), 1, Integer::sum);
                inARow++;
            }
        }
        System.out.println("FullNodesDrainTest: " + acked.size() + " PUTs acknowledged, " + refused.size()
                + " refused " + refusals);
        assertThat(inARow).as("the journals filled").isEqualTo(50);
        assertThat(acked).as("acknowledged before they filled").isNotEmpty();
        assertThat(refusals.keySet()).as("refusals").containsOnly(Status.DISK_FULL);
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(q + ": kvs1 refused PUT ") && e.contains("that the other copy took")))
                .as("the smaller node refused PUTs the other one took").isNotEmpty();
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(q + ": isolate ") || e.startsWith(q + ": rebuild ")))
                .as("no copy isolated, no rebuild").isEmpty();
        assertThat(cluster.awaitTwoSyncCopies(q, WAIT)).containsExactlyInAnyOrder("kvs1", "kvs2");

        // The refused PUTs are undone on the copy that took them; the acknowledged ones are on both.
        for (String node : List.of("kvs1", "kvs2")) {
            awaitNoneOf(node, q, refused);
            assertCopyWhole("journals full", node, q);
        }

        // Drain while full: every acknowledged message deleted through the writer.
        List<String> seen = ClusterRig.readAll(writer);
        assertThat(seen).as("what the writer reads").containsExactlyElementsOf(acked);
        for (String id : acked) {
            Ack a = writer.delete(id.getBytes()).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(a.status()).as("DELETE %s with the journals full: %s", id, a.reason()).isEqualTo(Status.OK);
        }
        for (String node : List.of("kvs1", "kvs2")) {
            assertThat(cluster.readCopy(node, q)).as("copy on %s after the drain", node).isEmpty();
        }

        // The next second: new records go to a new file, the drained one holds nothing live and goes
        // (the servers' maintenance, every second; compaction moves the record forward). PUTs taken again.
        clock.advanceMillis(1000);
        PutLedger after = new PutLedger();
        long deadline = System.nanoTime() + WAIT.toNanos();
        int tries = 0;
        while (true) {
            String id = "retry-" + tries++;
            Ack a = writer.put(id.getBytes(), 0, 0, new byte[0], BODY).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            if (a.isOk()) {
                after.issued(q, id);
                after.outcome(id, a);
                break;
            }
            assertThat(a.status()).isEqualTo(Status.DISK_FULL);
            assertThat(System.nanoTime()).as("a PUT taken again within %s", WAIT).isLessThan(deadline);
            Thread.sleep(200);
        }
        for (int i = 0; i < 200; i++) {
            String id = "after-" + i;
            after.issued(q, id);
            Ack a = writer.put(id.getBytes(), 0, 0, new byte[0], BODY).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            after.outcome(id, a);
            assertThat(a.status()).as("PUT %s after the drain: %s", id, a.reason()).isEqualTo(Status.OK);
        }
        System.out.println("FullNodesDrainTest: " + acked.size() + " deleted at the limit; PUTs taken again after "
                + tries + " tries; 201 more acknowledged");
        assertThat(cluster.eventsMatching(mark, e -> e.startsWith(q + ": isolate ") || e.startsWith(q + ": rebuild ")))
                .as("no copy isolated, no rebuild, from the fill to the end").isEmpty();
        // The refusals took their seqs on the full copy: no gap, no suffix renumbered, so every PUT has
        // the same position (its seq) on both copies and a reader's cursor is valid on either.
        assertThat(cluster.eventsMatching(mark, e -> e.contains(" answered SEQ_GAP "))).as("seq gaps").isEmpty();
        assertThat(cluster.positionsOnCopy("kvs1", q)).as("positions on kvs1 and kvs2")
                .containsExactlyEntriesOf(cluster.positionsOnCopy("kvs2", q));
        // Equal content, and equal digests again: once the queue is quiet the writer aligned the copy
        // whose digest counts the refusals (a conditional REBASE), so the next open keeps both copies
        // instead of taking them for different and rebuilding one, onto a node that may still be full.
        cluster.awaitEvent(mark, e -> e.startsWith(q + ": ") && e.contains(" takes the other copy's digest at seq "), WAIT,
                "the copies' digests aligned");
        long[] checks = awaitSameSeqAndDigest(q);
        System.out.println("FullNodesDrainTest: both copies at seq " + checks[0] + " with digest " + checks[1]);

        // James restarts: its new adapter reclaims the queue and keeps both copies as they are.
        int reopened = cluster.events.size();
        cluster.restartOpener();
        writer = cluster.openWriter(q, "james-a");
        assertThat(cluster.awaitTwoSyncCopies(q, WAIT)).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(ClusterRig.readAll(writer)).as("what the restarted writer reads").containsExactlyElementsOf(
                after.ids(q));
        assertThat(cluster.eventsMatching(reopened, e -> e.startsWith(q + ": isolate ") || e.startsWith(q + ": rebuild ")
                || e.contains("copies differ"))).as("the restarted writer kept both copies").isEmpty();
        for (String node : List.of("kvs1", "kvs2")) {
            assertCopyHolds(after, "after the drain", node, q, 201);
        }
    }

    /**
     * Waits (bounded) until both copies answer the same (last seq, digest), what the next open compares
     * them by (the writer's lease record moves both seqs now and then: read again until they meet).
     */
    private long[] awaitSameSeqAndDigest(String q) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        List<String> seen = new ArrayList<>();
        while (true) {
            QueueStat one = stat("kvs1", q);
            QueueStat two = stat("kvs2", q);
            if (one.lastSeq() == two.lastSeq() && one.digest() == two.digest()) {
                return new long[] {one.lastSeq(), one.digest()};
            }
            seen.add("kvs1 " + one.lastSeq() + "/" + one.digest() + " kvs2 " + two.lastSeq() + "/" + two.digest());
            assertThat(System.nanoTime()).as("the copies at the same seq and digest; seen %s", seen.subList(
                    Math.max(0, seen.size() - 5), seen.size())).isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private QueueStat stat(String node, String q) {
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(cluster.serverPort(node))
                .credentials("james", ClusterRig.PASSWORD).build())) {
            QueueStat s = c.open(q, OpenOptions.reader()).join().orThrow().stat().join();
            assertThat(s.status()).isEqualTo(Status.OK);
            return s;
        }
    }

    /** Waits (bounded) until the copy on {@code node} holds none of {@code ids}. */
    private void awaitNoneOf(String node, String q, List<String> ids) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            List<String> left = cluster.readCopy(node, q).stream().filter(ids::contains).toList();
            if (left.isEmpty()) {
                return;
            }
            assertThat(System.nanoTime()).as("refused PUTs still on %s: %s", node, left).isLessThan(deadline);
            Thread.sleep(100);
        }
    }
}
