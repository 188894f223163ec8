package org.jameskvs.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Properties;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
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
        try (KvsServer server = start(); KvsClient c = client(server)) {
            KvsQueue q = c.open("spool", OpenOptions.writer("n", 1)).join().orThrow();
            assertThat(q.put(RECORD_ID, 0, 0, b("v=1.1"), new byte[0]).join().isOk()).isTrue();
            assertThat(sizeMetric(server)).isEqualTo("0.0");
            assertThat(listSize(c)).isZero();
            q.put(b("mail-1"), 0, 0, new byte[0], b("body")).join().orThrow();
            q.put(b("mail-2"), 0, 0, new byte[0], b("body")).join().orThrow();
            q.putReplacing(RECORD_ID, 0, 0, b("v=1.2"), new byte[0]).join().orThrow(); // replaced, still one record
            assertThat(sizeMetric(server)).isEqualTo("2.0");
            assertThat(q.stat().join().size()).as("STAT stays raw").isEqualTo(3);
            q.delete(b("mail-1")).join().orThrow();
            assertThat(sizeMetric(server)).isEqualTo("1.0");
        }
        try (KvsServer server = start(); KvsClient c = client(server)) { // replayed from the journal
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

    private KvsServer start() {
        Properties p = ServerConfig.testProperties(dir, PASSWORD);
        p.setProperty("metrics.enabled", "true");
        p.setProperty("metrics.port", "0");
        return KvsServer.start(ServerConfig.fromProperties(p));
    }

    private static KvsClient client(KvsServer server) {
        return KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(server.port())
                .credentials("james", PASSWORD).build());
    }

    private static long listSize(KvsClient c) {
        ListResult list = c.listQueues().join();
        assertThat(list.isOk()).isTrue();
        return list.queues().stream().filter(i -> i.name().equals("spool")).mapToLong(QueueInfo::size).findFirst().orElseThrow();
    }

    private static String sizeMetric(KvsServer server) throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        for (String line : body.split("\n")) {
            if (line.startsWith("kvs_queue_size{queue=\"spool\"}")) {
                return line.substring(line.lastIndexOf(' ') + 1);
            }
        }
        throw new AssertionError("no kvs_queue_size for spool in:\n" + body);
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
