package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** The writer's commit point for its own reads ({@link UncommittedPuts}): what a READ and a GET may show. */
class UncommittedPutsTest {
    private final UncommittedPuts table = new UncommittedPuts();

    @Test
    void aReadStopsBeforeAPutInFlightAndShowsItOnceAcknowledged() {
        ReplicaOp b = put("b");
        ReadResult rr = table.filter(read(msg(1, "a"), msg(2, "b"), msg(3, "c")));
        assertThat(ids(rr)).containsExactly("a");
        assertThat(rr.nextPosition()).as("read again from the message in flight").isEqualTo(2);
        assertThat(table.filter(b.id, got(b.id)).status()).isEqualTo(Status.NOT_FOUND);

        b.ack.complete(new Ack(Status.OK, 1, 2, null));
        assertThat(ids(table.filter(read(msg(2, "b"), msg(3, "c"))))).containsExactly("b", "c");
        assertThat(table.filter(b.id, got(b.id)).status()).isEqualTo(Status.OK);
    }

    @Test
    void aFailedPutIsLeftOutForGoodUntilTheIdIsPutAgainOrDeleted() {
        ReplicaOp b = put("b");
        b.ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        ReadResult rr = table.filter(read(msg(1, "a"), msg(2, "b"), msg(3, "c")));
        assertThat(ids(rr)).containsExactly("a", "c");
        assertThat(rr.nextPosition()).as("the cursor goes past it").isEqualTo(4);

        ReplicaOp again = put("b");
        again.ack.complete(new Ack(Status.OK, 2, 5, null));
        assertThat(ids(table.filter(read(msg(5, "b"))))).containsExactly("b");
    }

    @Test
    void aRefusalBothCopiesGaveHidesNothing() {
        ReplicaOp dup = put("a");
        dup.ack.complete(Ack.failed(Status.DUPLICATE_ID, "a live message has this id"));
        assertThat(ids(table.filter(read(msg(1, "a"))))).as("the earlier PUT's message").containsExactly("a");
        assertThat(table.isEmpty()).isTrue();
    }

    @Test
    void aFailedPutIsUndoneOnceAndLeavesTheTableWhenTheUndoIsAcknowledged() {
        ReplicaOp b = put("b");
        b.ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        List<UncommittedPuts.Undo> due = table.undosDue(10);
        assertThat(due).extracting(u -> new String(u.id(), StandardCharsets.UTF_8)).containsExactly("b");
        assertThat(table.undosDue(10)).as("one undo in flight per id").isEmpty();

        table.undone(due.get(0), false);
        due = table.undosDue(10);
        assertThat(due).as("a failed undo is sent again").hasSize(1);
        table.undone(due.get(0), true);
        assertThat(table.isEmpty()).isTrue();
        assertThat(table.undosPending()).isZero();
        assertThat(ids(table.filter(read(msg(1, "a"))))).containsExactly("a");
    }

    @Test
    void noUndoWhileALaterPutOfTheIdIsInFlightAndNoneOnceItIsAcknowledged() {
        put("b").ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        ReplicaOp again = put("b");
        assertThat(table.undosDue(10)).as("the later PUT's outcome decides").isEmpty();
        again.ack.complete(new Ack(Status.OK, 2, 5, null));
        assertThat(table.undosDue(10)).as("an acknowledged PUT is never undone").isEmpty();
        assertThat(table.undosPending()).isZero();
    }

    @Test
    void anUndoOfAnEarlierFailureDoesNotSettleALaterOne() {
        put("b").ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        UncommittedPuts.Undo first = table.undosDue(10).get(0);
        // A later PUT of the id, sent after the undo (so ordered after it on both copies), fails too.
        put("b").ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        table.undone(first, true);
        assertThat(ids(table.filter(read(msg(7, "b"))))).as("still hidden: the later PUT failed").isEmpty();
        assertThat(table.undosDue(10)).as("the later failure is undone in turn").hasSize(1);
    }

    @Test
    void aLaterPutFindingTheFailedOneOnBothCopiesCommitsIt() {
        put("b").ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        put("b").ack.complete(Ack.failed(Status.DUPLICATE_ID, "a live message has this id"));
        assertThat(table.undosDue(10)).as("its caller counts it as stored: never undone").isEmpty();
        assertThat(ids(table.filter(read(msg(1, "b"))))).containsExactly("b");
    }

    @Test
    void onlyPlainPutsThatNoCopyRefusedAsDuplicatesAreUndone() {
        ReplicaOp replacing = new ReplicaOp(NodeOp.PUT_REPLACING, ReplicaOp.Purpose.CLIENT, 0);
        replacing.id = b("r");
        replacing.ack = new CompletableFuture<>();
        table.track(replacing);
        replacing.ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        ReplicaOp dupOnOne = put("d");
        dupOnOne.effective.put(new Member("kvs1", SyncState.SYNC, NodePath.ACTIVE), Status.DUPLICATE_ID);
        dupOnOne.ack.complete(Ack.failed(Status.INTERNAL_ERROR, "copies disagree"));
        assertThat(table.undosDue(10)).as("an earlier, maybe acknowledged, message of the id is not deleted").isEmpty();
        assertThat(ids(table.filter(read(msg(1, "r"), msg(2, "d"))))).as("hidden from this writer as before").isEmpty();
    }

    @Test
    void aFailedPutToUndoHoldsTheCommitPointUntilItsUndoIsAcknowledged() {
        ReplicaOp ok = put("a");
        ReplicaOp b = put("b");
        assertThat(table.holdsCommit(b)).as("in flight: its ack is not there yet (CommitPoint waits for it anyway)").isFalse();
        ok.ack.complete(new Ack(Status.OK, 1, 1, null));
        b.ack.complete(Ack.failed(Status.TIMEOUT, "outcome unknown"));
        assertThat(table.holdsCommit(ok)).isFalse();
        assertThat(table.holdsCommit(b)).isTrue();
        UncommittedPuts.Undo u = table.undosDue(10).get(0);
        assertThat(table.holdsCommit(b)).as("its undo in flight").isTrue();
        table.undone(u, true);
        assertThat(table.holdsCommit(b)).isFalse();
    }

    private ReplicaOp put(String id) {
        ReplicaOp op = new ReplicaOp(NodeOp.PUT, ReplicaOp.Purpose.CLIENT, 0);
        op.id = b(id);
        op.ack = new CompletableFuture<>();
        table.track(op);
        return op;
    }

    private static ReadResult read(StoredMessage... messages) {
        return new ReadResult(Status.OK, null, 1, messages[messages.length - 1].position() + 1, List.of(messages));
    }

    private static GetResult got(byte[] id) {
        return new GetResult(Status.OK, null, 1, new StoredMessage(1, id, 0, 0, new byte[0], new byte[0]));
    }

    private static StoredMessage msg(long position, String id) {
        return new StoredMessage(position, b(id), 0, 0, new byte[0], b("body"));
    }

    private static List<String> ids(ReadResult rr) {
        return rr.messages().stream().map(m -> new String(m.id(), StandardCharsets.UTF_8)).toList();
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
