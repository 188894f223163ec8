package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;


import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Epochs never wrap: bounds are refused with an error, used-up generations lead to a reclaim. */
class EpochsTest extends RealNodeSimulation {
    private static final String Q = "epochs.example.com";

    @Test
    void theHighestEpochIsStillPositiveAndOrderedAboveEveryLowerOne() {
        long top = Epochs.wire(Epochs.fencing(Epochs.MAX_COUNTER, 0xFFFFF), Epochs.MAX_GEN);
        assertThat(top).isPositive().isEqualTo(Long.MAX_VALUE);
        long lastGenOfOne = Epochs.wire(Epochs.fencing(7, 0xFFFFF), Epochs.MAX_GEN);
        long firstOfNext = Epochs.wire(Epochs.fencing(8, 0), 1);
        assertThat(firstOfNext).isGreaterThan(lastGenOfOne);
        assertThat(Epochs.counter(Epochs.fencingOf(firstOfNext))).isEqualTo(8);
    }

    @Test
    void outOfRangeCountersAndGenerationsAreRefusedNotWrapped() {
        assertThatThrownBy(() -> Epochs.fencing(Epochs.MAX_COUNTER + 1, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("epoch counter");
        assertThatThrownBy(() -> Epochs.wire(Epochs.fencing(1, 1), Epochs.MAX_GEN + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("generation");
    }

    @Test
    void anOpenWithAnEpochBeyondTheLayoutFailsWithAClearError() {
        SimCluster c = new SimCluster(11, 3, 1, pool.forQueue(Q));
        c.run(100);
        OpenResult r = c.await(c.writers.get(0).core.open(Q, OpenOptions.writer("james1", Epochs.MAX_COUNTER + 1)), 10_000);
        assertThat(r.status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(r.reason()).contains("beyond the highest writer epoch");
    }

    @Test
    void aWriterWhoseGenerationsAreUsedUpReclaimsAtTheNextCounterAndGoesOn() {
        SimCluster c = new SimCluster(12, 3, 1, pool.forQueue(Q));
        c.run(100);
        SimCluster.Writer w = c.writers.get(0);
        assertThat(c.await(w.open(Q, false), 10_000).isOk()).isTrue();
        assertThat(c.put(w, "before", "b").isOk()).isTrue();
        long counter = w.replica.epochCounter();
        w.replica.generationsUsedForTest(Epochs.MAX_GEN);

        String n0 = w.replica.syncNodes().get(0);
        c.world.cut(n0, NodePath.ACTIVE, true); // a path switch needs a new generation
        c.run(8000);
        c.world.cut(n0, NodePath.ACTIVE, false);
        c.run(3000);

        assertThat(c.log).anyMatch(l -> l.contains("generations of epoch " + counter + " are used up"));
        assertThat(w.replica.isFenced()).as(c.tail()).isFalse();
        assertThat(w.replica.epochCounter()).isEqualTo(counter + 1);
        Ack after = c.put(w, "after", "b");
        assertThat(after.isOk()).as(after + "\n" + c.tail()).isTrue();
        assertThat(w.replica.syncNodes()).hasSize(2);
        for (String n : w.replica.syncNodes()) {
            SimNode.QueueView q = c.world.servers.get(n).view(Q);
            assertThat(q.find("before")).as("before on " + n).isNotNull();
            assertThat(q.find("after")).as("after on " + n).isNotNull();
        }
    }
}
