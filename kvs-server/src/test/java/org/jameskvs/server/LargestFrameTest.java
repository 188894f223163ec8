package org.jameskvs.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * frame.maxBytes is what the server stores, not only what it reads: a PUT whose frame is exactly
 * the default limit (64 MiB) is stored and read back whole; one byte more is FRAME_TOO_LARGE. (The
 * journal once took records of at most a quarter of its 128 MiB block: such a PUT was answered
 * BAD_REQUEST, so a client holding a mail under the limit could only retry it for ever.)
 */
class LargestFrameTest {
    private static final String PASSWORD = "largest-frame";
    private static final byte[] ID = "largest".getBytes(StandardCharsets.UTF_8);
    @TempDir
    Path dir;

    @Test
    void aPutOfTheLargestAcceptedFrameIsStoredAndReadBack() {
        ServerConfig config = ServerConfig.forTest(dir, PASSWORD);
        int maxFrame = config.maxFrameBytes();
        // The frame length counts the bytes after the length field: header, id, priority, notBefore, state blob, body.
        int body = maxFrame - RequestDescriptor.HEADER_SIZE - (1 + ID.length) - 1 - 8 - 4;
        try (KvsServer server = KvsServer.start(config);
             // The GET answer carries a few more header bytes than the PUT: the client takes larger frames.
             KvsClient client = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(server.port())
                 .credentials("james", PASSWORD).requestTimeout(Duration.ofSeconds(60)).maxFrameBytes(maxFrame + 4096).build())) {
            KvsQueue queue = client.open("largest", OpenOptions.writer("test", 1)).join().orThrow();
            byte[] largest = new byte[body];
            Arrays.fill(largest, (byte) 'x');
            largest[body - 1] = 'z';

            Ack tooLarge = queue.put("toolong".getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], new byte[body + 1]).join();
            Ack stored = queue.put(ID, 0, 0, new byte[0], largest).join();

            assertThat(tooLarge.status()).isEqualTo(Status.FRAME_TOO_LARGE);
            assertThat(stored.status()).as(stored.reason()).isEqualTo(Status.OK);
            GetResult read = queue.get(ID).join();
            assertThat(read.isOk()).isTrue();
            assertThat(read.message().body()).isEqualTo(largest);
        }
    }
}
