package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real server process, killed with SIGKILL: every acknowledged message comes back, in order,
 * with its bytes. Size from -Dkill9.messages (default 50,000 x 1 KB in CI; the README's soak uses
 * 500,000).
 */
class KillDashNineTest {
    private static final String PASSWORD = "k9";
    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedMessageSurvivesKillDashNineInOrder() throws Exception {
        int n = Integer.getInteger("kill9.messages", 50_000);
        int size = 1024;
        long written;
        try (ServerProcess server = ServerProcess.start(dir, PASSWORD);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            written = pipelinedPuts(c, h, n, size);
            server.kill9();
        }
        assertThat(written).isEqualTo(n);
        long t0 = System.nanoTime();
        try (ServerProcess server = ServerProcess.start(dir, PASSWORD)) {
            long startupMs = (System.nanoTime() - t0) / 1_000_000;
            try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
                int h = c.open("spool", OpenMode.WRITE, 1);
                long from = 0;
                int seen = 0;
                while (true) {
                    long f = from;
                    RawClient.Response r = c.call(b -> Requests.read(b, c.nextSeq(), h, f, 1000, 4 << 20, 0));
                    assertThat(r.status()).isEqualTo(Status.OK);
                    ByteBuf p = r.payload();
                    from = p.readLong();
                    int count = p.readInt();
                    if (count == 0) {
                        break;
                    }
                    for (int i = 0; i < count; i++) {
                        StoredMessage m = StoredMessage.readRecord(p);
                        assertThat(new String(m.id(), StandardCharsets.UTF_8)).isEqualTo("m" + seen);
                        assertThat(m.body()).isEqualTo(body(seen, size));
                        seen++;
                    }
                }
                System.out.printf("kill -9 recovery: %d x %d B back in order; restart to listening %d ms%n",
                        seen, size, startupMs);
                assertThat(seen).isEqualTo(n);
            }
        }
    }

    /** Sends puts in windows of 1,000 without waiting, then reads the answers; returns how many were OK. */
    static long pipelinedPuts(RawClient c, int h, int n, int size) throws IOException {
        long ok = 0;
        int window = 1000;
        for (int base = 0; base < n; base += window) {
            ByteBuf batch = Unpooled.buffer(window * (size + 64));
            int end = Math.min(n, base + window);
            for (int i = base; i < end; i++) {
                Requests.put(batch, c.nextSeq(), h, ("m" + i).getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0],
                        body(i, size));
            }
            c.sendRaw(ByteBufUtil.getBytes(batch));
            for (int i = base; i < end; i++) {
                if (c.receive().status() == Status.OK) {
                    ok++;
                }
            }
        }
        return ok;
    }

    static byte[] body(int i, int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) ('a' + i % 26));
        byte[] tag = Integer.toString(i).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(tag, 0, b, 0, tag.length);
        return b;
    }

    @Test
    void killDuringWritesLosesNothingThatWasAcknowledged() throws Exception {
        List<String> acked = new ArrayList<>();
        try (ServerProcess server = ServerProcess.start(dir, PASSWORD);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            // Pipeline 5,000 puts, read 2,000 answers, then kill with the rest in flight.
            ByteBuf batch = Unpooled.buffer();
            for (int i = 0; i < 5000; i++) {
                Requests.put(batch, i + 100, h, ("k" + i).getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0], body(i, 512));
            }
            c.sendRaw(ByteBufUtil.getBytes(batch));
            for (int i = 0; i < 2000; i++) {
                RawClient.Response r = c.receive();
                if (r.status() == Status.OK) {
                    acked.add("k" + (r.sequence() - 100));
                }
            }
            server.kill9();
        }
        try (ServerProcess server = ServerProcess.start(dir, PASSWORD);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            RawClient.Response r = c.call(b -> Requests.read(b, c.nextSeq(), h, 0, 10_000, 64 << 20, 0));
            ByteBuf p = r.payload();
            p.readLong();
            int count = p.readInt();
            List<String> recovered = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                recovered.add(new String(StoredMessage.readRecord(p).id(), StandardCharsets.UTF_8));
            }
            System.out.printf("kill during writes: acknowledged=%d recovered=%d lost=%d%n", acked.size(),
                    recovered.size(), acked.stream().filter(id -> !recovered.contains(id)).count());
            assertThat(recovered).containsAll(acked);
            // Recovered messages are a prefix of what was sent, in order.
            for (int i = 0; i < recovered.size(); i++) {
                assertThat(recovered.get(i)).isEqualTo("k" + i);
            }
        }
    }
}
