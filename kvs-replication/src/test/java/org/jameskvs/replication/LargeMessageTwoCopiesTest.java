package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A message near the 64 MiB frame limit (the largest mail James's size hook lets through) on two
 * copies, with every path of both nodes a slow link: sending the frame takes several times the
 * heartbeat timeout and more than six request timeouts (the backstop of a call), while the heartbeat's PINGs and every
 * answer on the path wait behind it. The nodes keep reading it, so they are alive: both copies
 * must store it, no path may be declared NG and no copy isolated (before the fix, every heartbeat
 * behind such a frame timed out, the put was retried on the other path and a copy isolated).
 */
class LargeMessageTwoCopiesTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.large";
    /** Just under the servers' default frame.maxBytes (64 MiB), as the James size hook allows. */
    private static final int BODY = (64 << 20) - 4096 - (64 << 10) - 4096;
    /** Bytes per second on each path: the frame takes about BODY / RATE seconds to get through. */
    private static final long RATE = 4L << 20;

    @Test
    void aMessageNearTheFrameLimitOnASlowLinkIsStoredOnBothCopiesWithNoNodeDeclaredLost() throws Exception {
        cluster = new ProxiedCluster(dir, 2, c -> c);
        KvsQueue q = cluster.openWriter(Q, "james-a");
        List<String> copies = cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60));
        long sendNanos = BODY * 1_000_000_000L / RATE;
        assertThat(sendNanos).as("the frame must outlast the timeouts it is about (the call's backstop: 6 request timeouts)")
                .isGreaterThan(6 * cluster.config.requestTimeout().toNanos())
                .isGreaterThan(cluster.config.heartbeatTimeout().toNanos());
        for (String node : copies) {
            for (NodePath p : NodePath.values()) {
                cluster.limitRequestRate(node, p, RATE);
            }
        }
        int mark = cluster.events.size();

        byte[] body = new byte[BODY];
        for (int i = 0; i < body.length; i += 4096) {
            body[i] = (byte) (i >>> 12);
        }
        long t0 = System.nanoTime();
        Ack a = q.put("large".getBytes(StandardCharsets.UTF_8), 5, 0, null, body).get(300, TimeUnit.SECONDS);
        long putNanos = System.nanoTime() - t0;
        System.out.printf("put of %d bytes on two copies at %d bytes/s: %s in %d ms%n", BODY, RATE, a.status(), putNanos / 1_000_000);
        assertThat(a.isOk()).as("put: %s %s; events %s", a.status(), a.reason(), cluster.eventsMatching(mark, e -> true)).isTrue();
        // Not a timing claim: the put must have outlasted the backstop, else this test did not test it.
        assertThat(putNanos).as("the put outlasted the call's backstop (6 request timeouts)")
                .isGreaterThan(6 * cluster.config.requestTimeout().toNanos());
        Ack small = q.put("small".getBytes(StandardCharsets.UTF_8), 5, 0, null, new byte[16]).get(60, TimeUnit.SECONDS);
        assertThat(small.isOk()).as("%s %s", small.status(), small.reason()).isTrue();

        assertThat(cluster.eventsMatching(mark, e -> e.contains(" NG") || e.contains("isolate")
                || e.contains("failed") || e.contains("DATA LOSS")))
                .as("no path NG, no retry, no copy isolated while the large frame was sent").isEmpty();
        assertThat(cluster.awaitTwoSyncCopies(Q, Duration.ofSeconds(60))).containsExactlyInAnyOrderElementsOf(copies);
        for (String node : copies) {
            assertThat(cluster.readCopy(node, Q)).as("copy on " + node).containsExactly("large", "small");
        }
        ReadResult first = q.read(0, 1, 128 << 20, 0).get(120, TimeUnit.SECONDS);
        assertThat(first.isOk()).as("%s %s", first.status(), first.reason()).isTrue();
        assertThat(first.messages().get(0).body()).isEqualTo(body);
    }
}
