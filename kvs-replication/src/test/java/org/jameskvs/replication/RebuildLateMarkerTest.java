package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Found by the simulation on real servers (seed 283 of {@link ReplicationPropertyTest}): a rebuild
 * whose first marker (the STAT on the source) is answered late, because the source's path lost its
 * answers and the STAT went again on the other path after the mail put meanwhile. The first copy
 * range then held that live mail, which the target already had (DUPLICATE_ID), and the re-append
 * pass started at the late marker: the rebuilt copy handed the new mail out before the older one,
 * and kept that order when it later served as a rebuild source. The next pass now re-appends from
 * the first message the target already held.
 */
class RebuildLateMarkerTest {
    private static final String Q = "late-marker.example.net";

    @TempDir
    Path folders;
    private final List<RealNode.Pool> pools = new ArrayList<>();

    @AfterEach
    void close() {
        pools.forEach(RealNode.Pool::close);
    }

    @Test
    void aRebuildWhoseMarkerComesLateKeepsTheSourcesOrder() {
        RealNode.Pool pool = new RealNode.Pool(folders);
        pools.add(pool);
        SimCluster c = new SimCluster(41, 3, 1, pool.forQueue(Q));
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        List<String> pair = w.replica.syncNodes();
        String lost = pair.get(0), source = pair.get(1);
        for (int i = 0; i < 20; i++) {
            assertThat(c.put(w, id(i), "older mail").isOk()).isTrue();
        }

        c.world.holdAnswers(source, NodePath.ACTIVE, true); // the marker's answer will not come on this path
        c.world.crash(lost); // the copy on `lost` goes: a rebuild from `source` onto the third node starts
        List<CompletableFuture<Ack>> live = new ArrayList<>();
        for (int i = 20; i < 30; i++) {
            live.add(w.core.put(w.replica, id(i).getBytes(), 0, 0, new byte[0], "newer mail".getBytes()));
            c.run(30);
        }
        c.run(10_000);
        c.world.holdAnswers(source, NodePath.ACTIVE, false);
        c.world.restart(lost, true);
        c.run(5_000);

        String target = w.replica.syncNodes().stream().filter(n -> !n.equals(source)).findFirst().orElseThrow();
        assertThat(c.log).as("the rebuild onto the third node ran").anyMatch(l -> l.contains("rebuild " + target + " from " + source));
        assertThat(c.log).as("the source's active path failed while the marker was out")
                .anyMatch(l -> l.contains(source + "/ACTIVE failed"));
        assertThat(w.replica.syncNodes()).as(c.tail()).containsExactlyInAnyOrder(source, target);
        assertThat(w.replica.isRebuilding()).isFalse();
        assertThat(live).allSatisfy(f -> assertThat(f.join().isOk()).isTrue());
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            expected.add(id(i));
        }
        assertThat(mail(c, source)).as("the source holds the mail in the order it was put").isEqualTo(expected);
        assertThat(mail(c, target)).as("the rebuilt copy holds it in the same order\n" + c.tail()).isEqualTo(expected);
    }

    private static String id(int i) {
        return String.format("m%02d", i);
    }

    private static List<String> mail(SimCluster c, String node) {
        List<String> ids = new ArrayList<>();
        for (StoredMessage m : c.world.servers.get(node).view(Q).messages()) {
            if (!Ids.isReserved(m.id())) {
                ids.add(Ids.show(m.id()));
            }
        }
        return ids;
    }
}
