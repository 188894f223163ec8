package org.jameskvs.server;

import org.jameskvs.testkit.KvsServerProcess;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real server process, killed with SIGKILL: every acknowledged message comes back, in order,
 * with its bytes, whatever its {@code fsync.policy} (each scenario runs with {@code none},
 * {@code interval} and {@code batch}: the README's "kill -9 of a server, any fsync.policy"). Size
 * from -Dkill9.messages (default 50,000 x 1 KB in CI; -Dkill9.messages=500000 for a longer soak).
 */
class KillDashNineTest {
    private static final String PASSWORD = "k9";
    @TempDir
    Path dir;

    private KvsServerProcess start(String policy) throws Exception {
        return KvsServerProcess.in(dir).password(PASSWORD).properties("fsync.policy=" + policy).fromClassPath().start();
    }

    @ParameterizedTest(name = "fsync.policy={0}")
    @ValueSource(strings = {"none", "interval", "batch"})
    void everyAcknowledgedMessageSurvivesKillDashNineInOrder(String policy) throws Exception {
        int n = Integer.getInteger("kill9.messages", 50_000);
        assertThat(n).as("kill9.messages: with none acknowledged the test would prove nothing").isPositive();
        int size = 1024;
        long written;
        try (KvsServerProcess server = start(policy);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            written = PutSequence.pipelinedPuts(c, h, "m", n, size);
            server.kill9();
        }
        assertThat(written).as("puts acknowledged before the kill").isEqualTo(n);
        long t0 = System.nanoTime();
        try (KvsServerProcess server = start(policy)) {
            long startupMs = (System.nanoTime() - t0) / 1_000_000;
            try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
                int h = c.open("spool", OpenMode.WRITE, 1);
                int seen = PutSequence.readBackInOrder(c, h, "m", size);
                System.out.printf("kill -9 recovery (%s): %d x %d B back in order; restart to listening %d ms%n",
                        policy, seen, size, startupMs);
                assertThat(seen).isEqualTo(n);
            }
        }
    }

    /**
     * 5,000 puts pipelined, 2,000 answers read, then kill -9 with the rest in flight: every one of the
     * 2,000 must have been acknowledged (else the test proves nothing) and must come back, and what
     * comes back is a prefix of what was sent, in order, byte-exact.
     */
    @ParameterizedTest(name = "fsync.policy={0}")
    @ValueSource(strings = {"none", "interval", "batch"})
    void killDuringWritesLosesNothingThatWasAcknowledged(String policy) throws Exception {
        int size = 512;
        int answersRead = 2000;
        int acked = 0;
        try (KvsServerProcess server = start(policy);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            ByteBuf batch = Unpooled.buffer();
            for (int i = 0; i < 5000; i++) {
                Requests.put(batch, i + 100, h, ("k" + i).getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0],
                        PutSequence.body(i, size));
            }
            c.sendRaw(ByteBufUtil.getBytes(batch));
            for (int i = 0; i < answersRead; i++) {
                RawClient.Response r = c.receive();
                // Answers come in request order: answer i is put k<i>.
                assertThat(r.sequence()).isEqualTo(i + 100);
                if (r.status() == Status.OK) {
                    acked++;
                }
            }
            server.kill9();
        }
        assertThat(acked).as("puts acknowledged before the kill").isEqualTo(answersRead);
        try (KvsServerProcess server = start(policy);
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            int recovered = PutSequence.readBackInOrder(c, h, "k", size);
            System.out.printf("kill during writes (%s): acknowledged=%d recovered=%d (of 5000 sent)%n", policy, acked,
                    recovered);
            assertThat(recovered).as("recovered prefix covers every acknowledged put").isGreaterThanOrEqualTo(acked);
        }
    }
}
