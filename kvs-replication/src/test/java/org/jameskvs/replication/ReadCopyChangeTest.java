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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, defect 4, on real servers. The copy serving reads (kvs1) is isolated and, with no other
 * node free, rebuilt on the same node while puts go on. Keyed by node name, the replication kept
 * "kvs1" as the read copy without a change of position space: a reader went on at its old position
 * in a renumbered copy (stranded). And a rebuilt copy held the messages put during the rebuild
 * before the older copied ones: once it served reads (its partner lost), mail came out of FIFO order.
 */
class ReadCopyChangeTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.readcopy";

    @Test
    void aReadCopyRebuiltInPlaceChangesThePositionSpaceAndKeepsFifoOrder() throws Exception {
        cluster = new ProxiedCluster(dir, 3, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(800), Duration.ofMillis(1000))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                // One message per copy block: the rebuild takes long enough for puts to land during it.
                .withCopyBlock(1, 1 << 20)
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            expected.add(put(q, String.format("a-%03d", i)).get(30, TimeUnit.SECONDS).isOk() ? String.format("a-%03d", i) : null);
        }
        assertThat(expected).doesNotContainNull();
        ReadResult first = q.read(0, 10, 1 << 20, 0).get(30, TimeUnit.SECONDS);
        assertThat(first.isOk()).isTrue();
        int space = first.positionSpace();
        long resumeAt = first.nextPosition();

        int mark = cluster.events.size();
        freezeNode("kvs3", true); // no spare node: kvs1's copy will be rebuilt on kvs1 itself
        cluster.awaitEvent(mark, e -> e.contains("kvs3/STANDBY NG"), Duration.ofSeconds(30), "kvs3 down");
        cluster.awaitEvent(mark, e -> e.contains("kvs3/ACTIVE NG"), Duration.ofSeconds(30), "kvs3 down");
        freezeNode("kvs1", true);
        cluster.awaitEvent(mark, e -> e.contains("isolate kvs1"), Duration.ofSeconds(30), "kvs1 isolated");
        cluster.awaitEvent(mark, e -> e.contains("no node can take a second copy"), Duration.ofSeconds(30), "no spare");
        freezeNode("kvs1", false);
        cluster.awaitEvent(mark, e -> e.contains("rebuild kvs1 from kvs2"), Duration.ofSeconds(30), "kvs1 rebuilt");
        List<CompletableFuture<Ack>> during = new ArrayList<>();
        List<String> duringIds = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String id = String.format("b-%03d", i);
            duringIds.add(id);
            during.add(put(q, id));
        }
        cluster.awaitEvent(mark, e -> e.contains("rebuild of kvs1 done"), Duration.ofSeconds(60), "rebuild done");
        for (int i = 0; i < during.size(); i++) {
            Ack a = during.get(i).get(60, TimeUnit.SECONDS);
            assertThat(a.isOk()).as("put %s during the rebuild: %s", duringIds.get(i), a).isTrue();
            expected.add(duringIds.get(i));
        }
        cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(30));

        // The reader resumes where it was: the copy it read was isolated and rebuilt, so the answer
        // must say another position space (then it rescans), never continue in the new numbering.
        ReadResult resumed = q.read(resumeAt, 10, 1 << 20, 0).get(30, TimeUnit.SECONDS);
        assertThat(resumed.isOk()).isTrue();
        assertThat(resumed.positionSpace()).as("position space after the read copy was rebuilt").isNotEqualTo(space);

        // kvs2 goes: the rebuilt kvs1 serves the reads. A rescan from 0 gets the mail in put order.
        freezeNode("kvs2", true);
        cluster.awaitEvent(mark, e -> e.contains("isolate kvs2"), Duration.ofSeconds(30), "kvs2 isolated");
        assertThat(readAll(q)).as("order on the rebuilt copy").containsExactlyElementsOf(expected);
    }

    private void freezeNode(String node, boolean frozen) {
        cluster.freeze(node, NodePath.ACTIVE, frozen);
        cluster.freeze(node, NodePath.STANDBY, frozen);
    }

    private static CompletableFuture<Ack> put(KvsQueue q, String id) {
        return q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8));
    }

    /** Every id from position 0, block by block, in one position space (bounded). */
    private static List<String> readAll(KvsQueue q) throws Exception {
        List<String> ids = new ArrayList<>();
        long from = 0;
        Integer space = null;
        for (int block = 0; block < 1000; block++) {
            ReadResult rr = q.read(from, 37, 1 << 20, 0).get(30, TimeUnit.SECONDS);
            assertThat(rr.isOk()).as("read: %s", rr.reason()).isTrue();
            if (space == null) {
                space = rr.positionSpace();
            }
            assertThat(rr.positionSpace()).as("the read copy changed during the scan").isEqualTo(space);
            if (rr.messages().isEmpty()) {
                return ids;
            }
            for (StoredMessage m : rr.messages()) {
                ids.add(new String(m.id(), StandardCharsets.UTF_8));
            }
            from = rr.nextPosition();
        }
        throw new AssertionError("no end of the queue after 1000 blocks");
    }
}
