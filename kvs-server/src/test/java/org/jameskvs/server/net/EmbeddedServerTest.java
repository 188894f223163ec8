package org.jameskvs.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.ErrorResponse;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** The simulation's server without sockets: the real pipeline answers, commits, and a restart replays. */
class EmbeddedServerTest {
    @TempDir
    Path dir;

    @Test
    void answersThroughTheRealPipelineAndARestartReplaysTheJournal() {
        EmbeddedServer server = new EmbeddedServer(dir, 256 << 10);
        EmbeddedServer.Connection a = server.connect();
        assertThat(call(a, out -> Requests.open(out, 1, "q", OpenMode.WRITE, 5, 0, 0, "me")))
                .as("AUTH comes first").isEqualTo(Status.AUTH_REQUIRED);
        assertThat(call(a, out -> Requests.auth(out, 2, EmbeddedServer.USER, EmbeddedServer.PASSWORD))).isEqualTo(Status.OK);
        assertThat(call(a, out -> Requests.open(out, 3, "q", OpenMode.WRITE, 5, 0, 0, "me"))).isEqualTo(Status.OK);
        assertThat(call(a, out -> Requests.put(out, 4, 1, "m1".getBytes(), 0, 0, new byte[0], "body".getBytes())))
                .isEqualTo(Status.OK);

        EmbeddedServer.Connection b = server.connect();
        call(b, out -> Requests.auth(out, 1, EmbeddedServer.USER, EmbeddedServer.PASSWORD));
        assertThat(call(b, out -> Requests.open(out, 2, "q", OpenMode.WRITE, 5, 0, 0, "me")))
                .as("the writer's connection holds the queue").isEqualTo(Status.QUEUE_LOCKED);
        a.close();
        assertThat(call(b, out -> Requests.open(out, 3, "q", OpenMode.WRITE, 5, 0, 0, "me")))
                .as("released with its connection").isEqualTo(Status.OK);
        server.close();

        EmbeddedServer again = new EmbeddedServer(dir, 256 << 10);
        assertThat(again.store().queue("q").size()).as("replayed from the journal").isEqualTo(1);
        assertThat(again.store().queue("q").epoch()).isEqualTo(5);
        again.close();
    }

    /**
     * A writer that names the store it opened on is refused by another store (the node lost its
     * disk) before anything is created or fenced: the queue a newer owner opened there keeps its epoch.
     */
    @Test
    void anOpenExpectingAnotherStoreIsRefusedAndChangesNothing() {
        EmbeddedServer server = new EmbeddedServer(dir, 256 << 10);
        long store = server.store().storeId();
        EmbeddedServer.Connection a = server.connect();
        call(a, out -> Requests.auth(out, 1, EmbeddedServer.USER, EmbeddedServer.PASSWORD));
        assertThat(call(a, out -> Requests.open(out, 2, "fresh", OpenMode.WRITE, 9, 0, 0, "old", store + 1)))
                .isEqualTo(Status.STORE_CHANGED);
        assertThat(reason(a, out -> Requests.open(out, 2, "fresh", OpenMode.WRITE, 9, 0, 0, "old", store + 1)))
                .as("the refusal names both stores")
                .contains("expected store " + Long.toHexString(store + 1))
                .contains("store is " + Long.toHexString(store));
        assertThat(server.store().queue("fresh")).as("nothing created").isNull();

        assertThat(call(a, out -> Requests.open(out, 3, "q", OpenMode.WRITE, 5, 0, 0, "new", store))).isEqualTo(Status.OK);
        EmbeddedServer.Connection b = server.connect();
        call(b, out -> Requests.auth(out, 1, EmbeddedServer.USER, EmbeddedServer.PASSWORD));
        assertThat(call(b, out -> Requests.open(out, 2, "q", OpenMode.WRITE, 9, 0, 0, "old", store + 1)))
                .isEqualTo(Status.STORE_CHANGED);
        assertThat(server.store().queue("q").epoch()).as("not fenced").isEqualTo(5);
        assertThat(server.store().queue("q").owner()).isEqualTo("new");
        assertThat(call(a, out -> Requests.put(out, 4, 1, "m1".getBytes(), 0, 0, new byte[0], "body".getBytes())))
                .as("the newer owner's handle still writes").isEqualTo(Status.OK);
        server.close();
    }

    /** The reason of an error answer. */
    private static String reason(EmbeddedServer.Connection c, Consumer<ByteBuf> request) {
        ByteBuf out = Unpooled.buffer();
        request.accept(out);
        ByteBuf answer = c.exchange(out);
        try {
            answer.readInt();
            Status status = Frames.responseStatus(answer);
            return ErrorResponse.readReason(Frames.skipResponseHeader(answer), status);
        } finally {
            answer.release();
        }
    }

    private static Status call(EmbeddedServer.Connection c, Consumer<ByteBuf> request) {
        ByteBuf out = Unpooled.buffer();
        request.accept(out);
        ByteBuf answer = c.exchange(out);
        try {
            int length = answer.readInt();
            assertThat(answer.readableBytes()).as("one whole answer").isEqualTo(length);
            return Frames.responseStatus(answer);
        } finally {
            answer.release();
        }
    }
}
