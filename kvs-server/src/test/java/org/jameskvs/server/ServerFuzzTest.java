package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated frames against a live server: whatever arrives, the server stays up, answers
 * or closes only the offending connection, and a queue owned by another connection is untouched.
 * The seed is printed so a failure can be replayed.
 */
class ServerFuzzTest {
    private static final String PASSWORD = "fuzz";
    private static final int ROUNDS = 300;

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
        try (KvsServer server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
             RawClient bystander = RawClient.authenticated(server.port(), PASSWORD)) {
            int bh = bystander.open("precious", OpenMode.WRITE, 1);
            for (int i = 0; i < 50; i++) {
                assertThat(bystander.put(bh, "keep" + i, "payload" + i).status()).isEqualTo(Status.OK);
            }
            int answered = 0;
            int closed = 0;
            for (int round = 0; round < ROUNDS; round++) {
                RawClient fuzzer = RawClient.authenticated(server.port(), PASSWORD);
                fuzzer.socket.setSoTimeout(2000);
                int fh = fuzzer.open("fuzz" + (round % 5), OpenMode.WRITE, round);
                byte[] frame = mutate(rnd, validRequests(fh).get(rnd.nextInt(10)), rnd);
                try {
                    fuzzer.sendRaw(frame);
                    // A well-formed-length frame must be answered; follow with a PING to check the stream.
                    fuzzer.send(b -> Requests.empty(b, Opcode.PING, 99, 0));
                    fuzzer.receive();
                    answered++;
                } catch (IOException e) {
                    closed++; // framing lost or the mutated length made the server wait: both only hurt this client
                } finally {
                    fuzzer.close();
                }
            }
            System.out.println("fuzz rounds=" + ROUNDS + " answered=" + answered + " closedOrTimedOut=" + closed);
            assertThat(answered + closed).isEqualTo(ROUNDS);
            assertThat(answered).isPositive();
            // The bystander's queue is intact and its connection still works.
            RawClient.Response stat = bystander.simple(Opcode.STAT, bh);
            assertThat(stat.status()).isEqualTo(Status.OK);
            assertThat(stat.payload().readLong()).isEqualTo(50);
            assertThat(bystander.put(bh, "after", "fuzz").status()).isEqualTo(Status.OK);
            // And new clients are still served.
            try (RawClient fresh = RawClient.authenticated(server.port(), PASSWORD)) {
                assertThat(fresh.simple(Opcode.PING, 0).status()).isEqualTo(Status.OK);
            }
        }
    }

    private static byte[] mutate(Random rnd, Consumer<ByteBuf> valid, Random r) {
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
                bytes = java.util.Arrays.copyOf(bytes, cut);
                Unpooled.wrappedBuffer(bytes).setInt(0, cut - 4);
            }
            case 2 -> { // pure garbage body with a plausible length
                int n = 16 + r.nextInt(200);
                byte[] g = new byte[4 + n];
                rnd.nextBytes(g);
                Unpooled.wrappedBuffer(g).setInt(0, n);
                g[4] = 1; // right version, so it is decoded as a frame
                bytes = g;
            }
            case 3 -> { // random length field
                Unpooled.wrappedBuffer(bytes).setInt(0, r.nextInt());
            }
            default -> { // random opcode
                bytes[5] = (byte) r.nextInt(256);
            }
        }
        return bytes;
    }
}
