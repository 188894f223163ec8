package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.testkit.KvsServerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM (an operator's {@code systemctl stop}, {@code docker stop}) in the middle of a pipelined
 * write load on a real server process: the server stops taking connections, applies, commits and
 * answers the requests it has already read (for at most {@code shutdown.graceMillis}), then closes
 * the connections. Every put answered OK before the connection closed comes back after the restart,
 * in order, byte-exact; the answers that came are the requests' own, in order.
 */
class GracefulStopTest {
    private static final String PASSWORD = "graceful";
    private static final int SENT = 20_000;
    private static final int READ_BEFORE_STOP = 1_000;
    private static final int SIZE = 512;

    @TempDir
    Path dir;

    @Test
    void sigtermInTheMiddleOfPipelinedPutsLosesNoAcknowledgedPut() throws Exception {
        int acked = 0;
        int otherAnswers = 0;
        CompletableFuture<Void> stopped;
        try (KvsServerProcess server = start();
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            ByteBuf batch = Unpooled.buffer();
            for (int i = 0; i < SENT; i++) {
                Requests.put(batch, i + 100, h, ("k" + i).getBytes(StandardCharsets.UTF_8), 5, 0, new byte[0],
                        PutSequence.body(i, SIZE));
            }
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                try {
                    c.sendRaw(ByteBufUtil.getBytes(batch));
                } catch (IOException e) {
                    // the server closed the connection while the rest was being written: expected
                }
            });
            int answers = 0;
            for (; answers < READ_BEFORE_STOP; answers++) {
                RawClient.Response r = c.receive();
                assertThat(r.sequence()).isEqualTo(answers + 100);
                assertThat(r.status()).as("answer %d before the stop", answers).isEqualTo(Status.OK);
                acked++;
            }
            stopped = CompletableFuture.runAsync(() -> {
                try {
                    server.stop(); // SIGTERM, waits for the exit
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                while (answers < SENT) {
                    RawClient.Response r = c.receive();
                    assertThat(r.sequence()).as("answers in request order").isEqualTo(answers + 100);
                    answers++;
                    if (r.status() == Status.OK) {
                        acked++;
                    } else {
                        otherAnswers++;
                    }
                }
            } catch (EOFException | java.net.SocketException e) {
                // the server closed the connection: the answers it had are all here
            }
            stopped.get(60, TimeUnit.SECONDS);
            sent.get(60, TimeUnit.SECONDS);
        }
        assertThat(acked).as("puts acknowledged before the connection closed").isGreaterThanOrEqualTo(READ_BEFORE_STOP);
        try (KvsServerProcess server = start();
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("spool", OpenMode.WRITE, 1);
            int recovered = PutSequence.readBackInOrder(c, h, "k", SIZE);
            System.out.printf("SIGTERM during %d pipelined puts: %d acknowledged, %d other answers, %d back after the"
                    + " restart%n", SENT, acked, otherAnswers, recovered);
            assertThat(recovered).as("every acknowledged put is back, in order").isGreaterThanOrEqualTo(acked);
        }
    }

    private KvsServerProcess start() throws Exception {
        return KvsServerProcess.in(dir).password(PASSWORD).fromClassPath().start();
    }
}
