package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The protocol against a real server on a real socket: every operation and every error code. */
class ServerProtocolTest {
    private static final String PASSWORD = "s3cret";
    @RegisterExtension
    final ServerOnDisk server = new ServerOnDisk(PASSWORD);

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everythingBeforeAuthIsRefusedAndBadPasswordsCloseTheConnection() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            assertThat(c.simple(Opcode.PING, 0).status()).isEqualTo(Status.AUTH_REQUIRED);
            for (int i = 0; i < 3; i++) {
                assertThat(c.call(buf -> Requests.auth(buf, c.nextSeq(), "james", "wrong")).status())
                        .isEqualTo(Status.AUTH_FAILED);
            }
            assertThat(c.closedByServer()).isTrue();
        }
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            RawClient.Response pong = c.simple(Opcode.PING, 0);
            assertThat(pong.status()).isEqualTo(Status.OK);
            assertThat(pong.payload().readLong()).isPositive();
        }
    }

    @Test
    void putGetReplaceReadDeleteStatListClearDrop() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q1", OpenMode.WRITE, 1);
            RawClient.Response p1 = c.put(h, "a", "body-a");
            assertThat(p1.status()).isEqualTo(Status.OK);
            long txnAfterFirst = p1.txn();
            long posA = p1.payload().readLong();
            RawClient.Response p2 = c.put(h, "b", "body-b");
            assertThat(p2.txn()).isEqualTo(txnAfterFirst + 1);
            assertThat(p2.payload().readLong()).isGreaterThan(posA);
            long later = System.currentTimeMillis() + 3_600_000;
            c.call(buf -> Requests.put(buf, c.nextSeq(), h, b("c"), 9, later, b("st"), b("body-c")));

            RawClient.Response got = c.call(buf -> Requests.get(buf, c.nextSeq(), h, b("a")));
            assertThat(got.status()).isEqualTo(Status.OK);
            StoredMessage a = StoredMessage.readRecord(got.payload());
            assertThat(a.body()).isEqualTo(b("body-a"));
            assertThat(a.position()).isEqualTo(posA);

            assertThat(c.call(buf -> Requests.replace(buf, c.nextSeq(), h, b("a"), 7, 0, b("retry=1"))).status())
                    .isEqualTo(Status.OK);
            StoredMessage a2 = StoredMessage.readRecord(c.call(buf -> Requests.get(buf, c.nextSeq(), h, b("a"))).payload());
            assertThat(a2.state()).isEqualTo(b("retry=1"));
            assertThat(a2.priority()).isEqualTo(7);
            assertThat(a2.body()).isEqualTo(b("body-a"));
            assertThat(a2.position()).isEqualTo(posA);

            // Only ready messages: c is delayed an hour.
            RawClient.Response ready = c.call(buf -> Requests.read(buf, c.nextSeq(), h, 0, 100, 1 << 20,
                    System.currentTimeMillis()));
            assertThat(ids(ready.payload())).containsExactly("a", "b");
            RawClient.Response all = c.call(buf -> Requests.read(buf, c.nextSeq(), h, 0, 100, 1 << 20, 0));
            assertThat(ids(all.payload())).containsExactly("a", "b", "c");
            RawClient.Response firstOnly = c.call(buf -> Requests.read(buf, c.nextSeq(), h, 0, 1, 1 << 20, 0));
            assertThat(ids(firstOnly.payload())).containsExactly("a");

            RawClient.Response stat = c.simple(Opcode.STAT, h);
            ByteBuf s = stat.payload();
            assertThat(s.readLong()).isEqualTo(3);
            assertThat(s.readLong()).isEqualTo("body-a".length() * 3L);
            s.readLong();
            s.readLong();
            assertThat(s.readLong()).isEqualTo(later);
            assertThat(s.readLong()).isEqualTo(1);

            assertThat(c.call(buf -> Requests.delete(buf, c.nextSeq(), h, b("b"))).status()).isEqualTo(Status.OK);
            assertThat(c.call(buf -> Requests.delete(buf, c.nextSeq(), h, b("b"))).status()).isEqualTo(Status.NOT_FOUND);
            assertThat(c.call(buf -> Requests.get(buf, c.nextSeq(), h, b("b"))).status()).isEqualTo(Status.NOT_FOUND);

            RawClient.Response list = c.simple(Opcode.LIST, 0);
            assertThat(list.payload().readInt()).isEqualTo(1);
            assertThat(Wire.readString(list.payload())).isEqualTo("q1");
            assertThat(list.payload().readLong()).isEqualTo(2);

            assertThat(c.simple(Opcode.CLEAR, h).status()).isEqualTo(Status.OK);
            assertThat(c.simple(Opcode.STAT, h).payload().readLong()).isZero();
            assertThat(c.simple(Opcode.DROP, h).status()).isEqualTo(Status.OK);
            assertThat(c.simple(Opcode.STAT, h).status()).isEqualTo(Status.BAD_HANDLE);
            assertThat(c.simple(Opcode.LIST, 0).payload().readInt()).isZero();
        }
    }

    private static List<String> ids(ByteBuf readPayload) {
        readPayload.readLong();
        int n = readPayload.readInt();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(new String(StoredMessage.readRecord(readPayload).id(), StandardCharsets.UTF_8));
        }
        return ids;
    }

    @Test
    void badRequestsGetClearErrorsAndTheConnectionGoesOn() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 0);
            assertThat(c.put(h, "x", "1").status()).isEqualTo(Status.OK);
            assertThat(c.put(h, "x", "2").status()).isEqualTo(Status.DUPLICATE_ID);
            assertThat(c.simple(Opcode.STAT, 999).status()).isEqualTo(Status.BAD_HANDLE);
            // Unknown opcode 0x7F.
            ByteBuf unknown = Unpooled.buffer();
            int start = org.jameskvs.protocol.Frames.beginRequest(unknown, Opcode.PING, 4242, 0);
            org.jameskvs.protocol.Frames.finishFrame(unknown, start);
            unknown.setByte(start + 5, 0x7F);
            c.sendRaw(ByteBufUtil.getBytes(unknown));
            RawClient.Response r = c.receive();
            assertThat(r.status()).isEqualTo(Status.UNKNOWN_OPCODE);
            assertThat(r.sequence()).isEqualTo(4242);
            // PUT whose id length runs past the frame.
            ByteBuf bad = Unpooled.buffer();
            int s2 = org.jameskvs.protocol.Frames.beginRequest(bad, Opcode.PUT, 4243, h);
            bad.writeByte(200).writeBytes(new byte[3]);
            org.jameskvs.protocol.Frames.finishFrame(bad, s2);
            c.sendRaw(ByteBufUtil.getBytes(bad));
            RawClient.Response br = c.receive();
            assertThat(br.status()).isEqualTo(Status.BAD_REQUEST);
            assertThat(br.reason()).contains("truncated");
            // Read handle cannot write; unknown queue cannot be opened for reading.
            int rh = c.open("q", OpenMode.READ, 0);
            assertThat(c.put(rh, "y", "1").status()).isEqualTo(Status.READ_ONLY);
            assertThat(c.call(buf -> Requests.open(buf, c.nextSeq(), "nope", OpenMode.READ, 0, 0, 0, "")).status())
                    .isEqualTo(Status.NO_SUCH_QUEUE);
            // Still serving, and nothing was half-applied.
            assertThat(c.simple(Opcode.STAT, h).payload().readLong()).isEqualTo(1);
        }
    }

    @Test
    void oversizedFrameIsRefusedWithoutLosingTheConnection() throws Exception {
        server.restart(p -> {
            p.setProperty("frame.maxBytes", "4096");
            return p;
        });
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 0);
            RawClient.Response big = c.put(h, "big", "x".repeat(10_000));
            assertThat(big.status()).isEqualTo(Status.FRAME_TOO_LARGE);
            assertThat(c.put(h, "small", "ok").status()).isEqualTo(Status.OK);
        }
    }

    @Test
    void lostFramingClosesOnlyThatConnection() throws Exception {
        try (RawClient good = RawClient.authenticated(server.port(), PASSWORD);
             RawClient bad = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = good.open("q", OpenMode.WRITE, 0);
            bad.sendRaw(new byte[]{0, 0, 0, 2, 1, 1});
            RawClient.Response r = bad.receive();
            assertThat(r.status()).isEqualTo(Status.BAD_FRAME);
            assertThat(bad.closedByServer()).isTrue();
            assertThat(good.put(h, "m", "still fine").status()).isEqualTo(Status.OK);
        }
    }

    @Test
    void epochsFenceWriters() throws Exception {
        try (RawClient owner = RawClient.authenticated(server.port(), PASSWORD);
             RawClient other = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = owner.open("spool", OpenMode.WRITE, 5);
            assertThat(owner.put(h, "1", "a").status()).isEqualTo(Status.OK);
            // Same epoch while the owner is connected: locked.
            assertThat(other.call(b -> Requests.open(b, other.nextSeq(), "spool", OpenMode.WRITE, 5, 0, 0, "n2"))
                    .status()).isEqualTo(Status.QUEUE_LOCKED);
            // Lower epoch: stale.
            assertThat(other.call(b -> Requests.open(b, other.nextSeq(), "spool", OpenMode.WRITE, 4, 0, 0, "n2"))
                    .status()).isEqualTo(Status.STALE_EPOCH);
            // Higher epoch: takeover; the old owner's writes are refused from now on.
            int h2 = other.open("spool", OpenMode.WRITE, 6);
            assertThat(owner.put(h, "2", "b").status()).isEqualTo(Status.STALE_EPOCH);
            assertThat(owner.call(b -> Requests.delete(b, owner.nextSeq(), h, b("1"))).status())
                    .isEqualTo(Status.STALE_EPOCH);
            assertThat(other.put(h2, "3", "c").status()).isEqualTo(Status.OK);
            assertThat(other.simple(Opcode.STAT, h2).payload().readLong()).isEqualTo(2);
        }
    }

    @Test
    void epochAndMessagesSurviveARestart() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 9);
            for (int i = 0; i < 100; i++) {
                assertThat(c.put(h, "m" + i, "body" + i).status()).isEqualTo(Status.OK);
            }
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            assertThat(c.call(b -> Requests.open(b, c.nextSeq(), "spool", OpenMode.WRITE, 8, 0, 0, "old")).status())
                    .isEqualTo(Status.STALE_EPOCH);
            int h = c.open("spool", OpenMode.WRITE, 9);
            RawClient.Response all = c.call(buf -> Requests.read(buf, c.nextSeq(), h, 0, 1000, 1 << 24, 0));
            List<String> ids = ids(all.payload());
            assertThat(ids).hasSize(100);
            assertThat(ids.get(0)).isEqualTo("m0");
            assertThat(ids.get(99)).isEqualTo("m99");
        }
    }
}
