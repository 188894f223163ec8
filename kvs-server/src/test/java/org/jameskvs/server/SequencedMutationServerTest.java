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
 * Mutations sent with the queue seq their writer gave them, on a real server and socket: the next
 * seq is applied, a refusal takes its seq too, a repeat gets the first outcome and applies
 * nothing (also after a restart), a gap is refused with the server's last seq, and clients that
 * send no seq go on as before.
 */
class SequencedMutationServerTest {
    private static final String PASSWORD = "s3cret";
    @RegisterExtension
    final ServerOnDisk server = new ServerOnDisk(PASSWORD);

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static RawClient.Response put(RawClient c, int h, long queueSeq, String id) throws Exception {
        return c.call(buf -> Requests.putSequenced(buf, c.nextSeq(), h, 0, queueSeq, b(id), 0, 0, new byte[0], b("body-" + id)));
    }

    private static RawClient.Response delete(RawClient c, int h, long queueSeq, String id) throws Exception {
        return c.call(buf -> Requests.deleteSequenced(buf, c.nextSeq(), h, queueSeq, b(id)));
    }

    /** STAT's size and last seq. */
    private static long[] sizeAndSeq(RawClient c, int h) throws Exception {
        ByteBuf p = c.simple(Opcode.STAT, h).payload();
        long size = p.readLong();
        p.skipBytes(5 * 8);
        Wire.readString(p);
        p.readUnsignedByte();
        return new long[] {size, p.readLong()};
    }

    @Test
    void nextIsAppliedRefusalsTakeTheirSeqRepeatsGetTheFirstOutcome() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            RawClient.Response first = put(c, h, 1, "a");
            assertThat(first.status()).isEqualTo(Status.OK);
            long position = first.payload().readLong();
            RawClient.Response refused = delete(c, h, 2, "nobody");
            assertThat(refused.status()).isEqualTo(Status.NOT_FOUND);
            assertThat(sizeAndSeq(c, h)).as("the refusal took seq 2").containsExactly(1, 2);

            RawClient.Response again = put(c, h, 1, "a");
            assertThat(again.status()).as("a repeat is not a DUPLICATE_ID").isEqualTo(Status.OK);
            assertThat(again.payload().readLong()).as("the first PUT's position").isEqualTo(position);
            assertThat(again.txn()).isEqualTo(first.txn());
            RawClient.Response refusedAgain = delete(c, h, 2, "nobody");
            assertThat(refusedAgain.status()).isEqualTo(Status.NOT_FOUND);
            assertThat(refusedAgain.txn()).isEqualTo(refused.txn());
            assertThat(sizeAndSeq(c, h)).as("repeats applied nothing").containsExactly(1, 2);

            assertThat(put(c, h, 3, "b").status()).isEqualTo(Status.OK);
            assertThat(c.put(h, "c", "unsequenced").status()).as("a client without seqs").isEqualTo(Status.OK);
            assertThat(sizeAndSeq(c, h)).containsExactly(3, 4);
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(put(c, h, 1, "a").status()).as("a repeat after a restart").isEqualTo(Status.OK);
            assertThat(delete(c, h, 2, "nobody").status()).isEqualTo(Status.NOT_FOUND);
            assertThat(put(c, h, 3, "b").status()).isEqualTo(Status.OK);
            assertThat(sizeAndSeq(c, h)).containsExactly(3, 4);
        }
    }

    /**
     * DISK_FULL takes its seq too (a SKIP in the store's reserve): a full copy stays in step with a
     * copy that had room, instead of leaving a gap every later mutation bounces on. A store that cannot
     * record even the refusal answers STORAGE_ERROR and takes no seq.
     */
    @Test
    void diskFullTakesItsSeqAndAStoreThatCannotRecordTheRefusalTakesNone() throws Exception {
        server.restart(p -> {
            p.setProperty("journal.maxBytes", String.valueOf(64 * 1024));
            return p;
        });
        long full;
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            long seq = 0;
            RawClient.Response r;
            do {
                seq++;
                r = put(c, h, seq, "m" + seq);
            } while (r.status() == Status.OK && seq < 10_000);
            assertThat(r.status()).as("the PUT past the limit").isEqualTo(Status.DISK_FULL);
            full = seq;
            assertThat(sizeAndSeq(c, h)).as("the refusal took seq %s", full).containsExactly(full - 1, full);
            assertThat(put(c, h, full, "m" + full).status()).as("a repeat: the same refusal").isEqualTo(Status.DISK_FULL);
            assertThat(delete(c, h, full + 1, "m1").status()).as("a DELETE at the next seq, in the reserve").isEqualTo(Status.OK);
            assertThat(sizeAndSeq(c, h)).containsExactly(full - 2, full + 1);
        }
        server.restart(p -> {
            p.setProperty("journal.maxBytes", "1");
            return p;
        });
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(put(c, h, full, "m" + full).status()).as("the refusal's outcome after a restart").isEqualTo(Status.DISK_FULL);
            assertThat(sizeAndSeq(c, h)).as("the refusal's seq after a restart").containsExactly(full - 2, full + 1);
            RawClient.Response none = put(c, h, full + 2, "x");
            assertThat(none.status()).as("not even the SKIP fits").isEqualTo(Status.STORAGE_ERROR);
            assertThat(Wire.readString(none.payload())).contains("could not even record the refusal");
            assertThat(sizeAndSeq(c, h)).as("no seq taken").containsExactly(full - 2, full + 1);
        }
    }

    /** STAT's last seq and digest. */
    private static long[] seqAndDigest(RawClient c, int h) throws Exception {
        ByteBuf p = c.simple(Opcode.STAT, h).payload();
        p.skipBytes(6 * 8);
        Wire.readString(p);
        p.readUnsignedByte();
        return new long[] {p.readLong(), p.readLong()};
    }

    /**
     * A conditional REBASE (flag 0x0020) changes the digest only of a copy at exactly the expected
     * (seq, digest): another digest or another seq gets NOT_FOUND and changes nothing; a repeat once
     * aligned is OK; the new digest is kept across a restart.
     */
    @Test
    void aConditionalRebaseAlignsOnlyACopyAtTheExpectedSeqAndDigest() throws Exception {
        long aligned = 0x5EED_0000_0000_0001L;
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(put(c, h, 1, "a").status()).isEqualTo(Status.OK);
            long[] at = seqAndDigest(c, h);
            assertThat(at[0]).isEqualTo(1);

            RawClient.Response otherDigest = c.call(buf -> Requests.rebaseIfAt(buf, c.nextSeq(), h, 1, at[1] + 1, aligned));
            assertThat(otherDigest.status()).isEqualTo(Status.NOT_FOUND);
            assertThat(Wire.readString(otherDigest.payload())).contains("not at seq 1");
            RawClient.Response otherSeq = c.call(buf -> Requests.rebaseIfAt(buf, c.nextSeq(), h, 2, at[1], aligned));
            assertThat(otherSeq.status()).isEqualTo(Status.NOT_FOUND);
            assertThat(seqAndDigest(c, h)).as("refused: nothing changed").containsExactly(at);

            assertThat(c.call(buf -> Requests.rebaseIfAt(buf, c.nextSeq(), h, 1, at[1], aligned)).status()).isEqualTo(Status.OK);
            assertThat(seqAndDigest(c, h)).containsExactly(1, aligned);
            assertThat(c.call(buf -> Requests.rebaseIfAt(buf, c.nextSeq(), h, 1, at[1], aligned)).status())
                    .as("a repeat once aligned").isEqualTo(Status.OK);
        }
        server.restart();
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(seqAndDigest(c, h)).as("after a restart").containsExactly(1, aligned);
        }
    }

    @Test
    void aGapIsRefusedWithTheLastSeqAndAppliesNothing() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            assertThat(put(c, h, 1, "a").status()).isEqualTo(Status.OK);
            RawClient.Response gap = put(c, h, 3, "c");
            assertThat(gap.status()).isEqualTo(Status.SEQ_GAP);
            assertThat(Wire.readString(gap.payload())).contains("next is 2");
            assertThat(gap.payload().readLong()).as("the server's last seq").isEqualTo(1);
            assertThat(sizeAndSeq(c, h)).containsExactly(1, 1);
            assertThat(put(c, h, 2, "b").status()).as("the suffix resent from the next seq").isEqualTo(Status.OK);
            assertThat(put(c, h, 3, "c").status()).isEqualTo(Status.OK);
            assertThat(sizeAndSeq(c, h)).containsExactly(3, 3);
        }
    }

    /** The server keeps the latest 2,048 outcomes: a repeat of an older seq is refused, not guessed. */
    @Test
    void aRepeatOlderThanTheKeptOutcomesIsRefusedNotGuessed() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            for (int i = 1; i <= 2100; i++) {
                assertThat(put(c, h, i, "m" + i).status()).isEqualTo(Status.OK);
            }
            RawClient.Response old = put(c, h, 1, "m1");
            assertThat(old.status()).isEqualTo(Status.SEQ_TOO_OLD);
            assertThat(Wire.readString(old.payload())).contains("no longer kept");
            assertThat(put(c, h, 2100, "m2100").status()).as("a recent repeat").isEqualTo(Status.OK);
            assertThat(sizeAndSeq(c, h)).containsExactly(2100, 2100);
        }
    }

    @Test
    void aFencedWriterCannotApplyASequencedMutation() throws Exception {
        try (RawClient old = RawClient.authenticated(server.port(), PASSWORD);
             RawClient next = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = old.open("q", OpenMode.WRITE, 1);
            assertThat(put(old, h, 1, "a").status()).isEqualTo(Status.OK);
            int h2 = next.open("q", OpenMode.WRITE, 2);
            assertThat(put(old, h, 2, "b").status()).isEqualTo(Status.STALE_EPOCH);
            assertThat(put(next, h2, 2, "b").status()).as("OPEN took no seq").isEqualTo(Status.OK);
        }
    }
}
