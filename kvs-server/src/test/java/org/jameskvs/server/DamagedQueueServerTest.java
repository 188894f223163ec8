package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.Wire;
import org.jameskvs.server.storage.JournalDamage;
import org.jameskvs.testkit.KvsServerProcess;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A queue whose journal lost a record is reported damaged in the log, on the wire and in the
 * metrics: an ERROR line naming the queue and the transactions that may be lost, the
 * {@code DAMAGED} bit of the queue flags ending OPEN and STAT answers, and
 * {@code kvs_queue_damaged{queue}} = 1; an intact queue of the same server is not; CLEAR ends it.
 * The damaged journal is opened by a real server process, whose log the test reads.
 * The damage: one bit flipped inside a message body of a block that complete blocks follow (not a
 * torn tail: the dropped blocks had been committed; see the crash contract in QueueStore).
 */
class DamagedQueueServerTest {
    private static final String PASSWORD = "dmg";
    @TempDir
    Path dir;

    private ServerConfig config() {
        return ServerConfig.fromProperties(ServerConfig.testProperties(dir.resolve("data"), PASSWORD));
    }

    @Test
    void aDamagedQueueIsLoggedAndFlaggedInOpenStatAndMetricsUntilCleared() throws Exception {
        try (KvsServer server = KvsServer.start(config());
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            int other = c.open("other", OpenMode.WRITE, 1);
            assertThat(c.put(other, "o1", "intact").status()).isEqualTo(Status.OK);
            for (int i = 0; i < 20; i++) { // one answer awaited per put: one journal block each
                assertThat(c.put(h, "m" + i, ("<BODY-" + i + ">").repeat(40)).status()).isEqualTo(Status.OK);
            }
        }
        Path journal;
        try (Stream<Path> files = Files.list(dir.resolve("data"))) {
            journal = files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
        JournalDamage.flip(journal, JournalDamage.find(journal, "<BODY-5>") + 100);

        try (KvsServerProcess server = KvsServerProcess.in(dir.resolve("node")).dataDir(dir.resolve("data"))
                .password(PASSWORD).metrics().fromClassPath().start();
             RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int metricsPort = server.metricsPort();
            // The server has logged its recovery before "listening on", which start() waited for.
            List<String> damageLines = server.logText().lines().filter(l -> l.contains("is damaged")).toList();
            // q: its queue checkpoint is transaction 1, m0..m19 are 2..21; m5 (7) and every block after it dropped.
            assertThat(damageLines).as("the log's damage lines").singleElement(as(InstanceOfAssertFactories.STRING))
                    .contains("ERROR").contains("Queue 'q' is damaged: transactions 7..21 may be lost");
            RawClient.Response open = c.call(b -> Requests.open(b, c.nextSeq(), "q", OpenMode.WRITE, 2, 0, 0, "test"));
            assertThat(open.status()).isEqualTo(Status.OK);
            ByteBuf p = open.payload();
            int h = p.readInt();
            p.readLong();
            assertThat(p.readLong()).as("size: m5 and the blocks after it dropped").isEqualTo(5);
            assertThat(p.readUnsignedByte() & QueueFlags.DAMAGED).as("OPEN flags").isEqualTo(QueueFlags.DAMAGED);
            assertThat(statFlags(c, h)).as("STAT flags").isEqualTo(QueueFlags.DAMAGED);
            int other = c.open("other", OpenMode.WRITE, 2);
            assertThat(statFlags(c, other)).as("the intact queue's STAT flags").isZero();
            String metrics = scrape(metricsPort);
            assertThat(metrics).containsPattern("kvs_queue_damaged\\{queue=\"q\",?} 1\\.0")
                    .containsPattern("kvs_queue_damaged\\{queue=\"other\",?} 0\\.0");

            assertThat(c.simple(Opcode.CLEAR, h).status()).isEqualTo(Status.OK);
            assertThat(statFlags(c, h)).as("STAT flags after CLEAR").isZero();
            assertThat(scrape(metricsPort)).containsPattern("kvs_queue_damaged\\{queue=\"q\",?} 0\\.0");
        }
    }

    private static int statFlags(RawClient c, int h) throws IOException {
        RawClient.Response stat = c.simple(Opcode.STAT, h);
        assertThat(stat.status()).isEqualTo(Status.OK);
        ByteBuf p = stat.payload();
        p.skipBytes(6 * 8);
        Wire.readString(p);
        int flags = p.readUnsignedByte();
        assertThat(p.readableBytes()).as("after the flags: the last seq, the digest and the store id").isEqualTo(24);
        return flags;
    }

    private static String scrape(int port) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
    }
}
