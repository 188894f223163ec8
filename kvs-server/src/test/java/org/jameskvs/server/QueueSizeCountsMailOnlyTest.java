package org.jameskvs.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10: a queue empty of mail showed {@code kvs_queue_size 1} because the replication layer's own
 * membership record (an id starting with a zero byte) was counted. Metrics and LIST count mail only,
 * also after a restart (journal replay) and after CLEAR; STAT and OPEN keep the raw count (the
 * replication layer hides its record itself).
 */
class QueueSizeCountsMailOnlyTest {
    private static final String PASSWORD = "size-secret";
    private static final byte[] RECORD_ID = {0, 'r', 'e', 'p', 'l'};

    @TempDir
    Path dir;

    @Test
    void systemRecordsAreNotCountedInMetricsNorList() throws Exception {
        try (KvsServer server = MeteredServer.start(dir, PASSWORD); KvsClient c = MeteredServer.client(server, PASSWORD)) {
            KvsQueue q = c.open("spool", OpenOptions.writer("n", 1)).join().orThrow();
            assertThat(q.put(RECORD_ID, 0, 0, b("v=1.1"), new byte[0]).join().isOk()).isTrue();
            assertThat(sizeMetric(server)).isEqualTo("0.0");
            assertThat(listSize(c)).isZero();
            q.put(b("mail-1"), 0, 0, new byte[0], b("body")).join().orThrow();
            q.put(b("mail-2"), 0, 0, new byte[0], b("body")).join().orThrow();
            q.putReplacing(RECORD_ID, 0, 0, b("v=1.2"), new byte[0]).join().orThrow(); // replaced, still one record
            assertThat(sizeMetric(server)).isEqualTo("2.0");
            assertThat(bytesMetric(server)).as("the bodies of live messages (the record has none)").isEqualTo("8.0");
            assertThat(q.stat().join().size()).as("STAT stays raw").isEqualTo(3);
            q.delete(b("mail-1")).join().orThrow();
            assertThat(sizeMetric(server)).isEqualTo("1.0");
            assertThat(bytesMetric(server)).isEqualTo("4.0");
        }
        try (KvsServer server = MeteredServer.start(dir, PASSWORD); KvsClient c = MeteredServer.client(server, PASSWORD)) { // replayed from the journal
            assertThat(sizeMetric(server)).isEqualTo("1.0");
            assertThat(listSize(c)).isEqualTo(1);
            KvsQueue q = c.open("spool", OpenOptions.writer("n", 2)).join().orThrow();
            q.delete(RECORD_ID).join().orThrow();
            assertThat(sizeMetric(server)).isEqualTo("1.0");
            q.put(RECORD_ID, 0, 0, b("v=2.1"), new byte[0]).join().orThrow();
            q.clear().join().orThrow();
            assertThat(sizeMetric(server)).isEqualTo("0.0");
            q.put(b("mail-3"), 0, 0, new byte[0], b("body")).join().orThrow();
            assertThat(sizeMetric(server)).isEqualTo("1.0");
        }
    }



    private static String bytesMetric(KvsServer server) throws Exception {
        return String.valueOf(MeteredServer.queueMetric(server, "kvs_queue_bytes", "spool"));
    }

    private static String sizeMetric(KvsServer server) throws Exception {
        return String.valueOf(MeteredServer.queueMetric(server, "kvs_queue_size", "spool"));
    }

    private static long listSize(KvsClient c) {
        ListResult list = c.listQueues().join();
        assertThat(list.isOk()).isTrue();
        return list.queues().stream().filter(i -> i.name().equals("spool")).mapToLong(QueueInfo::size).findFirst().orElseThrow();
    }


    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
