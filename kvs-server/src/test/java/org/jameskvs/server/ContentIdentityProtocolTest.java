package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The content identity on the wire (protocol version 2): OPEN and STAT answers end with the queue
 * flags, the last seq, the digest and the store id, and nothing after; equal mutations give equal identities,
 * an owner change (write OPEN at a higher epoch) changes neither, another mutation changes the
 * digest; REBASE sets both on a write handle without moving the transaction number, and survives
 * a restart.
 */
class ContentIdentityProtocolTest {
    private static final String PASSWORD = "s3cret";
    @RegisterExtension
    final ServerOnDisk server = new ServerOnDisk(PASSWORD);

    /** (seq, digest) near the end of a STAT answer; only the store id follows them. */
    private record Identity(long seq, long digest) {
    }

    /** The store id the last {@link #stat} or {@link #open} answer ended with. */
    private static long lastStore;

    private static Identity stat(RawClient c, int h) throws Exception {
        RawClient.Response r = c.simple(Opcode.STAT, h);
        assertThat(r.status()).isEqualTo(Status.OK);
        ByteBuf p = r.payload();
        for (int i = 0; i < 6; i++) {
            p.readLong(); // size, bytes, firstPosition, nextPosition, earliestNotBefore, epoch
        }
        Wire.readString(p);
        p.readUnsignedByte();
        Identity id = new Identity(p.readLong(), p.readLong());
        lastStore = p.readLong();
        assertThat(p.readableBytes()).as("STAT ends with the store id").isZero();
        return id;
    }

    /** OPEN's answer: i32 handle, i64 epoch, i64 size, u8 flags, i64 seq, i64 digest, nothing after. */
    private static Identity open(RawClient c, String q, long epoch, String owner) throws Exception {
        RawClient.Response r = c.call(buf -> Requests.open(buf, c.nextSeq(), q, OpenMode.WRITE, epoch, 0, 0, owner));
        assertThat(r.status()).isEqualTo(Status.OK);
        ByteBuf p = r.payload();
        p.readInt();
        assertThat(p.readLong()).isEqualTo(epoch);
        p.readLong();
        p.readUnsignedByte();
        Identity id = new Identity(p.readLong(), p.readLong());
        lastStore = p.readLong();
        assertThat(p.readableBytes()).as("OPEN ends with the store id").isZero();
        return id;
    }

    private static void mutate(RawClient c, int h, String replaceState) throws Exception {
        assertThat(c.put(h, "a", "body-a").status()).isEqualTo(Status.OK);
        assertThat(c.put(h, "b", "body-b").status()).isEqualTo(Status.OK);
        assertThat(c.call(buf -> Requests.replace(buf, c.nextSeq(), h, b("a"), 3, 0, b(replaceState))).status())
                .isEqualTo(Status.OK);
        assertThat(c.call(buf -> Requests.delete(buf, c.nextSeq(), h, b("b"))).status()).isEqualTo(Status.OK);
    }

    @Test
    void equalMutationsGiveEqualIdentitiesAndOwnerChangesDoNotCount() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            assertThat(open(c, "one", 1, "w")).isEqualTo(new Identity(0, 0));
            int one = c.open("one", OpenMode.WRITE, 2);
            int two = c.open("two", OpenMode.WRITE, 2);
            int other = c.open("other", OpenMode.WRITE, 2);
            mutate(c, one, "retry=1");
            mutate(c, two, "retry=1");
            mutate(c, other, "retry=2");
            Identity first = stat(c, one);
            assertThat(first.seq()).as("put, put, replace, delete").isEqualTo(4);
            assertThat(stat(c, two)).as("same mutations, another queue").isEqualTo(first);
            assertThat(stat(c, other).seq()).isEqualTo(4);
            assertThat(stat(c, other).digest()).as("another REPLACE state").isNotEqualTo(first.digest());

            assertThat(open(c, "one", 3, "new-owner")).as("a takeover OPEN consumes no seq").isEqualTo(first);
            assertThat(c.simple(Opcode.CLEAR, c.open("one", OpenMode.WRITE, 3)).status()).isEqualTo(Status.OK);
            assertThat(stat(c, c.open("one", OpenMode.READ, 0)).seq()).as("CLEAR is a mutation").isEqualTo(5);
        }
    }

    @Test
    void rebaseSetsTheIdentityOnAWriteHandleOnly() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int w = c.open("q", OpenMode.WRITE, 1);
            long txn = c.put(w, "a", "body").txn();
            int r = c.open("q", OpenMode.READ, 0);
            assertThat(c.call(buf -> Requests.rebase(buf, c.nextSeq(), r, 9, 99)).status()).isEqualTo(Status.READ_ONLY);
            RawClient.Response ok = c.call(buf -> Requests.rebase(buf, c.nextSeq(), w, 41, 0xABCDL));
            assertThat(ok.status()).isEqualTo(Status.OK);
            assertThat(ok.txn()).as("REBASE moves no transaction number").isEqualTo(txn);
            assertThat(stat(c, w)).isEqualTo(new Identity(41, 0xABCDL));
            assertThat(c.put(w, "b", "body").status()).isEqualTo(Status.OK);
        }
        Identity before;
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            before = stat(c, c.open("q", OpenMode.READ, 0));
            assertThat(before.seq()).isEqualTo(42);
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            assertThat(stat(c, c.open("q", OpenMode.READ, 0))).as("after a restart").isEqualTo(before);
        }
    }

    /**
     * The store id: non-zero, the same in OPEN and STAT and across a restart, written in the data
     * directory's {@code store.id}; a new one after the server restarts on an emptied directory (a
     * lost disk) and after the file is damaged (the cautious reading: the node counts as one that
     * lost its data).
     */
    @Test
    void theStoreIdSurvivesARestartAndChangesWithTheDisk() throws Exception {
        long first;
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            open(c, "q", 1, "w");
            first = lastStore;
            stat(c, c.open("q", OpenMode.READ, 0));
            assertThat(lastStore).as("STAT and OPEN name the same store").isEqualTo(first);
        }
        assertThat(first).isNotZero();
        assertThat(java.nio.file.Files.readString(server.dir().resolve("store.id")).trim())
                .isEqualTo(String.format("%016x", first));
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            open(c, "q", 2, "w");
            assertThat(lastStore).as("after a restart with the data").isEqualTo(first);
        }
        server.wipeAndRestart();
        long second;
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            open(c, "q", 1, "w");
            second = lastStore;
        }
        assertThat(second).as("after a restart on an empty directory").isNotZero().isNotEqualTo(first);
        java.nio.file.Files.writeString(server.dir().resolve("store.id"), "not an id\n");
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            open(c, "q", 3, "w");
            assertThat(lastStore).as("after the file was damaged").isNotZero().isNotEqualTo(second);
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
