package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulation's one-writer check ({@link SimHistory#checkOneWriter}) on hand-made histories: an
 * acknowledgement at a lower epoch after another writer's higher takeover is a split brain, unless
 * that takeover's epoch went with a disk and it acknowledged nothing.
 */
class SimHistoryOneWriterTest {
    private static final long MS = SimCluster.MS;
    private static final List<String> WRITERS = List.of("james1", "james2");
    private static final long LOW = 1L << 20 | 7, HIGH = 2L << 20 | 9;

    private final SimHistory history = new SimHistory("q");
    private long seq;

    @Test
    void anAckAtALowerEpochAfterATakeoverThatAcknowledgedIsASplitBrain() {
        history.opensDone.add(new long[]{1, HIGH, 100 * MS});
        issue("james2", HIGH, 150, true);
        issue("james1", LOW, 200, true);

        history.checkOneWriter(WRITERS);

        assertThat(history.violations).singleElement().asString()
                .startsWith("split brain: james1 got an ack at epoch " + LOW)
                .contains("after writer 1 took over at epoch " + HIGH);
    }

    @Test
    void theHigherOwnerAcknowledgingOnlyAfterTheLowerOneIsStillASplitBrain() {
        // Its view of the queue predates the other writer's acknowledged writes.
        history.opensDone.add(new long[]{1, HIGH, 100 * MS});
        issue("james1", LOW, 200, true);
        issue("james2", HIGH, 900, true);

        history.checkOneWriter(WRITERS);

        assertThat(history.violations).hasSize(1);
    }

    @Test
    void aTakeoverLostWithADiskThatNeverAcknowledgedIsNoSecondWriter() {
        // The lost takeover of a wiped disk: its writer issued, but nothing was acknowledged.
        history.opensDone.add(new long[]{1, HIGH, 100 * MS});
        history.lostEpochs.add(new long[]{LOW - 1, 120 * MS}); // the wipe, after the takeover
        issue("james2", HIGH, 150, false);
        issue("james1", LOW, 200, true);

        assertThat(history.checkOneWriter(WRITERS)).containsExactly(LOW + " below " + HIGH);
        assertThat(history.violations).isEmpty();
    }

    @Test
    void aTakeoverThatAcknowledgedNothingButWasNotLostIsASecondWriter() {
        history.opensDone.add(new long[]{1, HIGH, 100 * MS});
        history.lostEpochs.add(new long[]{LOW - 1, 90 * MS}); // a wipe before that takeover
        issue("james2", HIGH, 150, false);
        issue("james1", LOW, 200, true);

        assertThat(history.checkOneWriter(WRITERS)).isEmpty();
        assertThat(history.violations).singleElement().asString().startsWith("split brain: james1");
    }

    @Test
    void writesIssuedBeforeTheTakeoverAndOwnEpochsAreNotFlagged() {
        history.opensDone.add(new long[]{1, HIGH, 100 * MS});
        history.opensDone.add(new long[]{0, HIGH + (1L << 20), 300 * MS}); // james1's own later epoch
        issue("james1", LOW, 50, true); // in flight at the takeover: applied before the fence
        issue("james2", HIGH, 150, true);
        issue("james1", HIGH + (1L << 20), 400, true);

        history.checkOneWriter(WRITERS);

        assertThat(history.violations).isEmpty();
    }

    @Test
    void aReclaimTheWriterMadeByItselfIsAnOwnershipToo() {
        // No open tracked for james2's epoch: it reclaimed by itself, first issuing at 150 ms.
        issue("james2", HIGH, 150, true);
        issue("james1", LOW, 200, true);

        history.checkOneWriter(WRITERS);

        assertThat(history.violations).singleElement().asString().contains("after writer 1 took over at epoch " + HIGH);
    }

    private void issue(String writer, long epoch, long atMs, boolean acked) {
        SimHistory.Issued op = new SimHistory.Issued(writer, NodeOp.PUT, writer + "-" + seq, "s0", epoch, ++seq, atMs * MS);
        op.outcome = acked ? new Ack(Status.OK, seq, 0, null) : Ack.failed(Status.TIMEOUT, "late");
        history.track(op);
    }
}
