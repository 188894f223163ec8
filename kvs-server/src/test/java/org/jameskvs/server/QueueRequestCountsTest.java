package org.jameskvs.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: what one queue costs the server in requests ({@code kvs_queue_requests_total{queue}}) and
 * answer bytes ({@code kvs_queue_response_bytes_total{queue}}), so that the work a queue causes (a
 * suspended lane's, holding mail) can be counted apart from the others'. Every request addressed
 * through the queue's handle counts, refused ones included; another queue's requests do not.
 */
class QueueRequestCountsTest {
    private static final String PASSWORD = "count-secret";

    @TempDir
    Path dir;

    @Test
    void requestsAndAnswerBytesAreCountedPerQueue() throws Exception {
        try (KvsServer server = MeteredServer.start(dir, PASSWORD); KvsClient c = MeteredServer.client(server, PASSWORD)) {
            KvsQueue busy = c.open("busy", OpenOptions.writer("n", 1)).join().orThrow();
            KvsQueue quiet = c.open("quiet", OpenOptions.writer("n", 1)).join().orThrow();
            for (int i = 0; i < 10; i++) {
                busy.put(b("m" + i), 0, 0, new byte[0], b("0123456789")).join().orThrow();
            }
            busy.put(b("m0"), 0, 0, new byte[0], b("dup")).join(); // refused (DUPLICATE_ID): counted
            busy.stat().join();
            long beforeRead = metric(server, "kvs_queue_response_bytes_total", "busy");
            assertThat(busy.read(0, 100, 1 << 20, Long.MAX_VALUE).join().messages()).hasSize(10);
            long readAnswer = metric(server, "kvs_queue_response_bytes_total", "busy") - beforeRead;
            quiet.stat().join();

            assertThat(metric(server, "kvs_queue_requests_total", "busy")).as("10 PUT, 1 refused PUT, STAT, READ").isEqualTo(13);
            assertThat(readAnswer).as("READ's answer holds the 10 bodies").isGreaterThan(10 * 10);
            assertThat(metric(server, "kvs_queue_requests_total", "quiet")).as("one STAT").isEqualTo(1);
            assertThat(metric(server, "kvs_queue_response_bytes_total", "quiet")).isPositive().isLessThan(readAnswer);
        }
    }




    private static long metric(KvsServer server, String name, String queue) throws Exception {
        return (long) MeteredServer.queueMetric(server, name, queue);
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
