package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Positions on the wire (issue 10 item 2): a PUT's position is its seq, whether the writer numbered
 * it or the server did, so two copies with the same history agree on every position; a PUT at a
 * given position (a rebuild copying its source) takes it, also below the queue's tail, and READ
 * still answers in position order; REBASE carries the source's next position. All of it survives
 * a restart (the positions are in the journal's PUT and REBASE records).
 */
class PositionIsSeqProtocolTest {
    private static final String PASSWORD = "s3cret";
    @RegisterExtension
    final ServerOnDisk server = new ServerOnDisk(PASSWORD);

    @Test
    void aPutTakesItsSeqAsPosition() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(position(c.put(h, "a", "body"))).as("seq 1").isEqualTo(1);
            assertThat(position(c.put(h, "b", "body"))).as("seq 2").isEqualTo(2);
            assertThat(c.call(buf -> Requests.delete(buf, c.nextSeq(), h, b("a"))).status()).isEqualTo(Status.OK);
            assertThat(c.call(buf -> Requests.replace(buf, c.nextSeq(), h, b("b"), 1, 0, b("s"))).status())
                    .isEqualTo(Status.OK);
            assertThat(position(c.put(h, "c", "body"))).as("seq 5: the delete and replace took 3 and 4").isEqualTo(5);
            RawClient.Response sequenced = c.call(buf -> Requests.putSequenced(buf, c.nextSeq(), h, 0, 6, b("d"), 0, 0,
                    new byte[0], b("body")));
            assertThat(position(sequenced)).as("the writer's seq 6").isEqualTo(6);
            RawClient.Response repeat = c.call(buf -> Requests.putSequenced(buf, c.nextSeq(), h, 0, 6, b("d"), 0, 0,
                    new byte[0], b("body")));
            assertThat(position(repeat)).as("a repeat answers the first position").isEqualTo(6);
            assertThat(read(c, h)).containsExactly(Map.entry("b", 2L), Map.entry("c", 5L), Map.entry("d", 6L));
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 2);
            assertThat(read(c, h)).as("after a restart").containsExactly(Map.entry("b", 2L), Map.entry("c", 5L),
                    Map.entry("d", 6L));
            assertThat(position(c.put(h, "e", "body"))).as("seq 7 (the OPEN took none)").isEqualTo(7);
        }
    }

    @Test
    void aPutAtAGivenPositionTakesItAndReadStaysInPositionOrder() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(position(putAt(c, h, 0, 40, "x"))).isEqualTo(40);
            assertThat(putAt(c, h, 0, 40, "y").status()).as("a position another live message has")
                    .isEqualTo(Status.BAD_REQUEST);
            assertThat(position(c.put(h, "live", "body"))).as("the server's own: above the given one").isEqualTo(41);
            assertThat(position(putAt(c, h, 0, 7, "copied"))).as("below the tail").isEqualTo(7);
            assertThat(position(putAt(c, h, RequestDescriptor.FLAG_REPLACE_EXISTING, 3, "x"))).as("a replacing PUT")
                    .isEqualTo(3);
            assertThat(read(c, h)).containsExactly(Map.entry("x", 3L), Map.entry("copied", 7L), Map.entry("live", 41L));
            RawClient.Response zero = putAt(c, h, 0, 0, "z");
            assertThat(zero.status()).isEqualTo(Status.BAD_REQUEST);
            assertThat(zero.reason()).contains("position");
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.READ, 0);
            assertThat(read(c, h)).as("after a restart").containsExactly(Map.entry("x", 3L), Map.entry("copied", 7L),
                    Map.entry("live", 41L));
        }
    }

    @Test
    void rebaseCarriesTheSourcesNextPosition() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(c.call(buf -> Requests.rebase(buf, c.nextSeq(), h, 20, 0xABL, 50)).status()).isEqualTo(Status.OK);
            assertThat(position(c.put(h, "a", "body"))).as("the source's next position").isEqualTo(50);
            assertThat(c.call(buf -> Requests.rebase(buf, c.nextSeq(), h, 60, 0xCDL)).status())
                    .as("without a next position (an older writer)").isEqualTo(Status.OK);
            assertThat(position(c.put(h, "b", "body"))).as("seq 61").isEqualTo(61);
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 2);
            assertThat(position(c.put(h, "c", "body"))).as("seq 62 after a restart").isEqualTo(62);
        }
    }

    private static RawClient.Response putAt(RawClient c, int h, int flags, long position, String id) throws Exception {
        return c.call(buf -> Requests.putAt(buf, c.nextSeq(), h, flags, position, b(id), 0, 0, new byte[0], b("body-" + id)));
    }

    private static long position(RawClient.Response r) {
        assertThat(r.status()).as("PUT: %s", r.reason()).isEqualTo(Status.OK);
        return r.payload().duplicate().readLong();
    }

    /** The queue's messages, id to position, in the order READ returns them. */
    private static Map<String, Long> read(RawClient c, int h) throws Exception {
        RawClient.Response r = c.call(buf -> Requests.read(buf, c.nextSeq(), h, 0, 100, 1 << 20, 0));
        assertThat(r.status()).isEqualTo(Status.OK);
        ByteBuf p = r.payload();
        p.readLong();
        int count = p.readInt();
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            long position = p.readLong();
            String id = new String(Wire.readId(p), StandardCharsets.UTF_8);
            p.readUnsignedByte();
            p.readLong();
            p.skipBytes(p.readInt());
            p.skipBytes(p.readInt());
            out.put(id, position);
        }
        return out;
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
