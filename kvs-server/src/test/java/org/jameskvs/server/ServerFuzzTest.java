package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated frames against a live server, one fresh connection per round. For each round
 * the test works out from the bytes alone what the server must do ({@link ExpectedAnswers}): answer
 * every frame once, in order, echoing its sequence number and opcode, with the status where the bytes
 * decide it, and then either go on (a PING sent after it is answered) or, only when framing was lost,
 * answer BAD_FRAME and close. A frame the framing leaves incomplete is completed with zero bytes, so
 * every round ends in one of those two observable outcomes. No answer may be INTERNAL_ERROR or
 * STORAGE_ERROR. Afterwards another connection's queue holds exactly what it held, byte-exact, and
 * new connections are served.
 *
 * <p>The seed is printed; {@code -Dfuzz.seed=N} replays a run exactly (the random choices never
 * depend on the server's answers).
 */
class ServerFuzzTest {
    private static final String PASSWORD = "fuzz";
    private static final int ROUNDS = 300;
    /**
     * A small frame limit, so that a mutated length over it (answered FRAME_TOO_LARGE, its bytes
     * skipped) can be completed by sending the rest of the skipped bytes.
     */
    private static final int MAX_FRAME = 4096;
    private static final long PING_SEQUENCE = 99;

    @TempDir
    Path dir;

    private static List<Consumer<ByteBuf>> validRequests(int handle) {
        byte[] id = "id".getBytes(StandardCharsets.UTF_8);
        return List.of(
                b -> Requests.put(b, 1, handle, id, 5, 0, new byte[3], new byte[40]),
                b -> Requests.delete(b, 2, handle, id),
                b -> Requests.replace(b, 3, handle, id, 1, 0, new byte[5]),
                b -> Requests.get(b, 4, handle, id),
                b -> Requests.read(b, 5, handle, 0, 10, 1000, 0),
                b -> Requests.open(b, 6, "fuzzq", OpenMode.WRITE, 1, 0, 0, "o"),
                b -> Requests.empty(b, Opcode.STAT, 7, handle),
                b -> Requests.empty(b, Opcode.LIST, 8, 0),
                b -> Requests.empty(b, Opcode.CLEAR, 9, handle),
                b -> Requests.empty(b, Opcode.PING, 10, 0));
    }

    @Test
    void mutatedAndRandomFramesNeverHurtTheServerOrOtherQueues() throws Exception {
        long seed = Long.getLong("fuzz.seed", System.nanoTime());
        System.out.println("ServerFuzzTest seed=" + seed + " (replay with -Dfuzz.seed=" + seed + ")");
        Random rnd = new Random(seed);
        Properties props = ServerConfig.testProperties(dir, PASSWORD);
        props.setProperty("frame.maxBytes", Integer.toString(MAX_FRAME));
        try (KvsServer server = KvsServer.start(ServerConfig.fromProperties(props));
             RawClient bystander = RawClient.authenticated(server.port(), PASSWORD)) {
            int bh = bystander.open("precious", OpenMode.WRITE, 1);
            for (int i = 0; i < 50; i++) {
                assertThat(bystander.put(bh, "keep" + i, "payload" + i).status()).isEqualTo(Status.OK);
            }
            Map<Status, Integer> statuses = new EnumMap<>(Status.class);
            int wentOn = 0;
            int lost = 0;
            for (int round = 0; round < ROUNDS; round++) {
                try (RawClient fuzzer = RawClient.authenticated(server.port(), PASSWORD)) {
                    int fh = fuzzer.open("fuzz" + (round % 5), OpenMode.WRITE, round);
                    assertThat(fh).isEqualTo(1);
                    byte[] mutated = mutate(rnd, validRequests(fh).get(rnd.nextInt(10)));
                    Round r = Round.of(mutated);
                    String what = "round " + round + " (seed " + seed + "), stream " + ByteBufUtil.hexDump(
                            r.stream, 0, Math.min(64, r.stream.length)) + (r.stream.length > 64 ? "..." : "");
                    sendInPieces(fuzzer, r.stream, rnd);
                    for (ExpectedAnswers.Answer a : r.expected.answers) {
                        RawClient.Response got = fuzzer.receive();
                        assertThat(got.sequence()).as("sequence echoed, " + what).isEqualTo(a.sequence());
                        assertThat(got.opcode()).as("opcode echoed, " + what).isEqualTo(a.opcode());
                        if (a.status() != null) {
                            assertThat(got.status()).as("status decided by the bytes, " + what).isEqualTo(a.status());
                        }
                        assertThat(got.status()).as("never a server failure, " + what)
                                .isNotIn(Status.INTERNAL_ERROR, Status.STORAGE_ERROR, Status.BAD_FRAME);
                        if (got.status() != Status.OK) {
                            assertThat(got.reason()).as("an error says why, " + what).isNotEmpty();
                        }
                        statuses.merge(got.status(), 1, Integer::sum);
                    }
                    if (r.expected.end == ExpectedAnswers.End.LOST) {
                        RawClient.Response bad = fuzzer.receive();
                        assertThat(bad.status()).as("framing lost, " + what).isEqualTo(Status.BAD_FRAME);
                        assertThat(bad.sequence()).isZero();
                        assertThat(fuzzer.closedByServer()).as("closed after BAD_FRAME, " + what).isTrue();
                        lost++;
                    } else {
                        // The last expected answer was the PING's: the connection went on.
                        ExpectedAnswers.Answer last = r.expected.answers.get(r.expected.answers.size() - 1);
                        assertThat(last.sequence()).isEqualTo(PING_SEQUENCE);
                        wentOn++;
                    }
                }
            }
            System.out.println("fuzz rounds=" + ROUNDS + " wentOn=" + wentOn + " framingLost=" + lost
                    + " answers by status=" + statuses);
            assertThat(wentOn + lost).isEqualTo(ROUNDS);
            assertThat(wentOn).as("rounds whose connection went on").isPositive();
            assertThat(statuses.keySet()).as("error answers seen").hasSizeGreaterThan(2);
            assertBystanderIntact(bystander, bh);
            try (RawClient fresh = RawClient.authenticated(server.port(), PASSWORD)) {
                assertThat(fresh.simple(Opcode.PING, 0).status()).isEqualTo(Status.OK);
            }
        }
    }

    /** The mutated frame, completed where the framing would wait, then a PING unless framing is lost. */
    private record Round(byte[] stream, ExpectedAnswers expected) {
        static Round of(byte[] mutated) {
            ByteBuf ping = Unpooled.buffer();
            Requests.empty(ping, Opcode.PING, PING_SEQUENCE, 0);
            byte[] stream = mutated;
            for (int step = 0; step < 10; step++) {
                ExpectedAnswers e = ExpectedAnswers.of(stream, MAX_FRAME, 1);
                switch (e.end) {
                    case LOST -> {
                        // Nothing past the loss is read; sending it could meet the closed socket.
                        return new Round(Arrays.copyOf(stream, e.lostAt), e);
                    }
                    case INCOMPLETE -> stream = Arrays.copyOf(stream, stream.length + (int) e.missing);
                    case CLEAN -> {
                        byte[] withPing = concat(stream, ByteBufUtil.getBytes(ping));
                        ExpectedAnswers p = ExpectedAnswers.of(withPing, MAX_FRAME, 1);
                        assertThat(p.end).isEqualTo(ExpectedAnswers.End.CLEAN);
                        return new Round(withPing, p);
                    }
                }
            }
            throw new AssertionError("stream still incomplete after 10 paddings");
        }
    }

    private static void sendInPieces(RawClient c, byte[] stream, Random rnd) throws IOException {
        int at = 0;
        while (at < stream.length) {
            int n = 1 + rnd.nextInt(stream.length - at);
            c.sendRaw(Arrays.copyOfRange(stream, at, at + n));
            at += n;
        }
    }

    private static void assertBystanderIntact(RawClient bystander, int bh) throws IOException {
        RawClient.Response stat = bystander.simple(Opcode.STAT, bh);
        assertThat(stat.status()).isEqualTo(Status.OK);
        assertThat(stat.txn()).as("bystander's transactions: its owner change at OPEN and 50 puts").isEqualTo(51);
        assertThat(stat.payload().readLong()).isEqualTo(50);
        RawClient.Response read = bystander.call(b -> Requests.read(b, bystander.nextSeq(), bh, 0, 100, 1 << 20, 0));
        ByteBuf p = read.payload();
        p.readLong();
        assertThat(p.readInt()).isEqualTo(50);
        for (int i = 0; i < 50; i++) {
            StoredMessage m = StoredMessage.readRecord(p);
            assertThat(new String(m.id(), StandardCharsets.UTF_8)).isEqualTo("keep" + i);
            assertThat(new String(m.body(), StandardCharsets.UTF_8)).isEqualTo("payload" + i);
        }
        assertThat(bystander.put(bh, "after", "fuzz").status()).isEqualTo(Status.OK);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] mutate(Random r, Consumer<ByteBuf> valid) {
        ByteBuf b = Unpooled.buffer();
        valid.accept(b);
        byte[] bytes = ByteBufUtil.getBytes(b);
        switch (r.nextInt(5)) {
            case 0 -> { // flip random bytes after the length field
                for (int i = 0; i < 1 + r.nextInt(4); i++) {
                    int at = 4 + r.nextInt(bytes.length - 4);
                    bytes[at] = (byte) r.nextInt(256);
                }
            }
            case 1 -> { // truncate the payload but keep a consistent length
                int cut = 20 + r.nextInt(Math.max(1, bytes.length - 20));
                bytes = Arrays.copyOf(bytes, cut);
                Unpooled.wrappedBuffer(bytes).setInt(0, cut - 4);
            }
            case 2 -> { // pure garbage body with a plausible length
                int n = 16 + r.nextInt(200);
                byte[] g = new byte[4 + n];
                r.nextBytes(g);
                Unpooled.wrappedBuffer(g).setInt(0, n);
                g[4] = 1; // right version, so it is decoded as a frame
                bytes = g;
            }
            case 3 -> { // wrong length field: below the header, shorter or longer than the frame, or over the limit
                int length = r.nextInt(4) == 0 ? r.nextInt(16) : r.nextInt(3 * MAX_FRAME);
                Unpooled.wrappedBuffer(bytes).setInt(0, length);
            }
            default -> { // random opcode
                bytes[5] = (byte) r.nextInt(256);
            }
        }
        return bytes;
    }
}
