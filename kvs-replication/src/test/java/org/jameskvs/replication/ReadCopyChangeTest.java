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
 * Issue 10, defect 4 and item 2, on real servers. The copy serving reads (kvs1) is isolated and,
 * with no other node free, rebuilt on the same node while puts go on; later its partner goes and
 * the rebuilt copy serves the reads. A PUT's position is its seq on both copies, and the rebuild
 * carries the source's positions: a reader's cursor stays valid on every copy, the position space
 * never changes, there is no rescan, and the reader gets every message once, in put order.
 * (Before: positions were per copy, each change of read copy meant a rescan from 0, and a copy
 * rebuilt in place could strand a reader at its old position in a renumbered copy.)
 */
class ReadCopyChangeTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.readcopy";

    @Test
    void aReaderCursorStaysValidAcrossReadCopyChangesAndARebuild() throws Exception {
        cluster = new ProxiedCluster(dir, 3, c -> c
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(800), Duration.ofMillis(1000))
                .withLease(Duration.ofMinutes(10), Duration.ofMinutes(20))
                // One message per copy block: the rebuild takes long enough for puts to land during it.
                .withCopyBlock(1, 1 << 20)
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs1", "kvs2"))));
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String id = String.format("a-%03d", i);
            Ack a = put(q, id).get(30, TimeUnit.SECONDS);
            assertThat(a.isOk()).as("put %s: %s", id, a).isTrue();
            expected.add(id);
        }
        Reader reader = new Reader(q);
        reader.readBlock(10); // (the replication's record, left out, may take a place in a block)
        assertThat(reader.ids).as("mid-queue").isNotEmpty().hasSizeLessThan(expected.size());

        int mark = cluster.events.size();
        cluster.freezeNode("kvs3", true); // no spare node: kvs1's copy will be rebuilt on kvs1 itself
        cluster.awaitEvent(mark, e -> e.contains("kvs3/STANDBY NG"), Duration.ofSeconds(30), "kvs3 down");
        cluster.awaitEvent(mark, e -> e.contains("kvs3/ACTIVE NG"), Duration.ofSeconds(30), "kvs3 down");
        cluster.freezeNode("kvs1", true); // the read copy
        cluster.awaitEvent(mark, e -> e.contains("isolate kvs1"), Duration.ofSeconds(30), "kvs1 isolated");
        cluster.awaitEvent(mark, e -> e.contains("no node can take a second copy"), Duration.ofSeconds(30), "no spare");
        // The read copy changed (kvs1 frozen): the cursor goes on on kvs2.
        int before = reader.ids.size();
        reader.readBlock(10);
        assertThat(reader.ids).as("the cursor goes on on kvs2").hasSizeGreaterThan(before);
        cluster.freezeNode("kvs1", false);
        cluster.awaitEvent(mark, e -> e.contains("rebuild kvs1 from kvs2"), Duration.ofSeconds(30), "kvs1 rebuilt");
        List<CompletableFuture<Ack>> during = new ArrayList<>();
        List<String> duringIds = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String id = String.format("b-%03d", i);
            duringIds.add(id);
            during.add(put(q, id));
        }
        reader.readBlock(10);
        cluster.awaitEvent(mark, e -> e.contains("rebuild of kvs1 done"), Duration.ofSeconds(60), "rebuild done");
        for (int i = 0; i < during.size(); i++) {
            Ack a = during.get(i).get(60, TimeUnit.SECONDS);
            assertThat(a.isOk()).as("put %s during the rebuild: %s", duringIds.get(i), a).isTrue();
            expected.add(duringIds.get(i));
        }
        cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(30));

        // The rebuilt copy holds every message at the position its source gave it.
        Map<String, Long> onKvs1 = cluster.positionsOnCopy("kvs1", Q);
        Map<String, Long> onKvs2 = cluster.positionsOnCopy("kvs2", Q);
        assertThat(onKvs1.keySet()).as("messages on the rebuilt copy").containsExactlyElementsOf(expected);
        assertThat(onKvs1).as("positions on the rebuilt copy kvs1 and on its source kvs2").isEqualTo(onKvs2);

        // kvs2 goes: the rebuilt kvs1 serves the reads, and the reader goes on where it was.
        reader.readBlock(10);
        cluster.freezeNode("kvs2", true);
        cluster.awaitEvent(mark, e -> e.contains("isolate kvs2"), Duration.ofSeconds(30), "kvs2 isolated");
        reader.readToEnd();
        assertThat(reader.ids).as("every message once, in put order, across three read copies")
                .containsExactlyElementsOf(expected);
    }

    /** A queue reader that keeps its cursor: it fails the test on any change of position space (a rescan). */
    private static final class Reader {
        final KvsQueue q;
        final List<String> ids = new ArrayList<>();
        long cursor;
        Integer space;

        Reader(KvsQueue q) {
            this.q = q;
        }

        /** Reads up to {@code n} messages from the cursor; returns how many. */
        int readBlock(int n) throws Exception {
            ReadResult rr = q.read(cursor, n, 1 << 20, 0).get(30, TimeUnit.SECONDS);
            assertThat(rr.isOk()).as("read at %s: %s %s", cursor, rr.status(), rr.reason()).isTrue();
            if (space == null) {
                space = rr.positionSpace();
            }
            assertThat(rr.positionSpace()).as("position space at cursor %s (a change means a rescan)", cursor)
                    .isEqualTo(space);
            for (StoredMessage m : rr.messages()) {
                if (!Ids.isReserved(m.id())) {
                    ids.add(new String(m.id(), StandardCharsets.UTF_8));
                }
            }
            cursor = rr.nextPosition();
            return rr.messages().size();
        }

        void readToEnd() throws Exception {
            for (int block = 0; block < 1000; block++) {
                if (readBlock(37) == 0) {
                    return;
                }
            }
            throw new AssertionError("no end of the queue after 1000 blocks");
        }
    }

    private static CompletableFuture<Ack> put(KvsQueue q, String id) {
        return q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8));
    }
}
