package org.jameskvs.server;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.OpenMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writer's commit point on a real server and socket (flag 0x0008 on sequenced mutations, the
 * COMMIT request): a read handle's READ and GET never show a message above it, also after a
 * restart; the writer's own handle shows everything; a queue never given one shows everything.
 */
class CommitPointServerTest {
    private static final String PASSWORD = "s3cret";
    @RegisterExtension
    final ServerOnDisk server = new ServerOnDisk(PASSWORD);

    private KvsClient client() {
        return KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(server.port())
                .credentials("james", PASSWORD).requestTimeout(Duration.ofSeconds(10)).build());
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Ack put(KvsQueue w, long seq, long committed, String id) {
        return w.sequenced(seq, committed, Opcode.PUT, false, b(id), 0, 0, new byte[0], b("body " + id)).join();
    }

    private static List<String> ids(ReadResult rr) {
        assertThat(rr.isOk()).as("%s %s", rr.status(), rr.reason()).isTrue();
        return rr.messages().stream().map(m -> new String(m.id(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void aReadHandleSeesOnlyWhatTheWriterDeclaredCommitted() {
        try (KvsClient c = client()) {
            KvsQueue w = c.open("q", OpenOptions.writer("james-a", 1)).join().orThrow();
            assertThat(put(w, 1, 0, "a").isOk()).isTrue();
            assertThat(put(w, 2, 1, "b").isOk()).isTrue();
            assertThat(put(w, 3, 2, "c").isOk()).isTrue(); // the writer knows a and b on both copies
            KvsQueue r = c.open("q", OpenOptions.reader()).join().orThrow();
            ReadResult rr = r.read(0, 100, 1 << 20, 0).join();
            assertThat(ids(rr)).containsExactly("a", "b");
            assertThat(rr.nextPosition()).as("stops before c (position 3)").isEqualTo(3);
            assertThat(r.get(b("c")).join().status()).isEqualTo(Status.NOT_FOUND);
            assertThat(ids(r.readUncommitted(0, 100, 1 << 20, 0).join())).as("flag 0x0010: the copy as it is")
                    .containsExactly("a", "b", "c");
            assertThat(ids(w.read(0, 100, 1 << 20, 0).join())).as("the writer's handle").containsExactly("a", "b", "c");

            assertThat(w.commit(3).join().isOk()).as("COMMIT when idle").isTrue();
            assertThat(ids(r.read(3, 100, 1 << 20, 0).join())).containsExactly("c");
            assertThat(r.get(b("c")).join().status()).isEqualTo(Status.OK);
            assertThat(put(w, 4, 3, "d").isOk()).isTrue();
            assertThat(r.commit(4).join().status()).as("COMMIT needs the write handle").isEqualTo(Status.READ_ONLY);

            KvsQueue plain = c.open("plain", OpenOptions.writer("james-a", 1)).join().orThrow();
            assertThat(plain.put(b("x"), 0, 0, new byte[0], b("x")).join().isOk()).isTrue();
            assertThat(plain.sequenced(2, Opcode.PUT, false, b("y"), 0, 0, new byte[0], b("y")).join().isOk()).isTrue();
            KvsQueue plainReader = c.open("plain", OpenOptions.reader()).join().orThrow();
            assertThat(ids(plainReader.read(0, 100, 1 << 20, 0).join())).as("never given a commit point")
                    .containsExactly("x", "y");
        }
        server.restart();
        try (KvsClient c = client()) {
            KvsQueue r = c.open("q", OpenOptions.reader()).join().orThrow();
            assertThat(ids(r.read(0, 100, 1 << 20, 0).join())).as("after a restart").containsExactly("a", "b", "c");
            KvsQueue w = c.open("q", OpenOptions.writer("james-b", 2)).join().orThrow();
            assertThat(w.commit(4).join().isOk()).isTrue();
            assertThat(ids(r.read(0, 100, 1 << 20, 0).join())).containsExactly("a", "b", "c", "d");
        }
    }

    @Test
    void theCommittedFlagWithoutASequencedMutationIsABadRequest() throws Exception {
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            int h = c.open("q", OpenMode.WRITE, 1);
            RawClient.Response r = c.call(buf -> {
                Requests.put(buf, c.nextSeq(), h, RequestDescriptor.FLAG_COMMITTED, b("a"), 0, 0, new byte[0], b("x"));
            });
            assertThat(r.status()).isEqualTo(Status.BAD_REQUEST);
        }
    }
}
