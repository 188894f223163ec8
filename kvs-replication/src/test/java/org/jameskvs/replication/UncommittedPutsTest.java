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
