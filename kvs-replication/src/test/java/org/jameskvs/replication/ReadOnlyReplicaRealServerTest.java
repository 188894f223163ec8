package org.jameskvs.replication;

import org.jameskvs.testkit.FreezableProxy;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read-only opens of a replicated queue against real KVS servers on 127.0.0.1. The writer's open
 * fences every node of the group, which leaves an EMPTY queue of the same name on the node that is
 * not a copy; a read-only reader must nevertheless read from an in-sync copy named by the newest
 * membership record, and follow the copies when the one serving its reads goes away.
 */
class ReadOnlyReplicaRealServerTest {
    private static final String PASSWORD = "secret";
    private static final String Q = "orset.log.james-a";

    @TempDir
    Path dir;

    private final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private final List<ReplicatedQueueOpener> openers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        openers.forEach(ReplicatedQueueOpener::close);
        servers.values().forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // already closed by the test
            }
        });
    }

    /** Three nodes; the queue's copies are placed on kvs2 and kvs3, so kvs1 (first in group order) only gets fenced. */
    private ReplicationConfig startCluster() {
        for (int i = 1; i <= 3; i++) {
            String name = "kvs" + i;
            servers.put(name, KvsServer.start(ServerConfig.forTest(dir.resolve(name), PASSWORD)));
        }
        return config(name -> servers.get(name).port());
    }

    /** The group's configuration with the given port per node (the servers' own, or proxies in front of them). */
    private ReplicationConfig config(java.util.function.ToIntFunction<String> port) {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (String name : servers.keySet()) {
            int p = port.applyAsInt(name);
            specs.add(new ReplicationConfig.NodeSpec(name, "127.0.0.1", p, "127.0.0.1", p));
        }
        return ReplicationConfig.of(specs, "james", PASSWORD)
                .withTimings(Duration.ofMillis(200), Duration.ofMillis(600), Duration.ofMillis(1000))
                .withLease(Duration.ofMillis(500), Duration.ofMillis(10_000))
                .withPlacement(ReplicationConfig.PlacementRule.SPREAD, Map.of(Q, List.of("kvs2", "kvs3")));
    }

    private ReplicatedQueueOpener opener(ReplicationConfig config) throws InterruptedException {
        ReplicatedQueueOpener o = ReplicatedQueueOpener.start(config);
        openers.add(o);
        assertThat(o.awaitConnected(3, Duration.ofSeconds(20))).isTrue();
        return o;
    }

    private static OpenResult openUntilOk(ReplicatedQueueOpener o, OpenOptions options) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 50; i++) {
            r = o.open(Q, options).join();
            if (r.isOk()) {
                return r;
            }
            Thread.sleep(100); // connections / heartbeats still coming up
        }
        throw new AssertionError("open failed: " + r.status() + " " + r.reason());
    }

    private static void put(KvsQueue q, String id) {
        var ack = q.put(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], ("body " + id).getBytes(StandardCharsets.UTF_8)).join();
        assertThat(ack.isOk()).as("put %s: %s %s", id, ack.status(), ack.reason()).isTrue();
    }

    /** A put while the copies change: retried (bounded) until acknowledged; a retry may find it there already. */
    private static void putEventually(KvsQueue q, String id) throws InterruptedException {
        Status last = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            var ack = q.putReplacing(id.getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0],
                    ("body " + id).getBytes(StandardCharsets.UTF_8)).join();
            if (ack.isOk()) {
                return;
            }
            last = ack.status();
            Thread.sleep(100);
        }
        throw new AssertionError("put " + id + " never acknowledged: " + last);
    }

    /**
     * Full passes (bounded in count and time) until one sees exactly {@code expected} in a position
     * space other than {@code oldSpace}; returns that pass.
     */
    private static Pass scanUntil(KvsQueue reader, List<String> expected, int oldSpace) throws InterruptedException {
        Pass pass = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (int i = 0; i < 300 && System.nanoTime() < deadline; i++) {
            pass = scan(reader);
            if (pass.failure == null && pass.spaces.size() == 1 && !pass.spaces.contains(oldSpace)
                    && pass.ids.equals(new LinkedHashSet<>(expected))) {
                return pass;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the reader never saw " + expected + " in a new position space; last pass " + pass);
    }

    /** One full pass from position 0 (bounded): the ids seen and the position spaces of the blocks. */
    private static Pass scan(KvsQueue reader) {
        Pass pass = new Pass();
        long from = 0;
        for (int blocks = 0; blocks < 100; blocks++) {
            ReadResult rr = reader.read(from, 3, 1 << 20, 0).join();
            if (!rr.isOk()) {
                pass.failure = rr.status() + " " + rr.reason();
                return pass;
            }
            pass.spaces.add(rr.positionSpace());
            for (StoredMessage m : rr.messages()) {
                pass.reservedSeen |= Ids.isReserved(m.id());
                pass.ids.add(new String(m.id(), StandardCharsets.UTF_8));
            }
            if (rr.messages().isEmpty()) {
                return pass;
            }
            from = rr.nextPosition();
        }
        pass.failure = "too many blocks";
        return pass;
    }

    private static final class Pass {
        final Set<String> ids = new LinkedHashSet<>();
        final Set<Integer> spaces = new LinkedHashSet<>();
        boolean reservedSeen;
        String failure;

        @Override
        public String toString() {
            return "ids=" + ids + " spaces=" + spaces + (failure == null ? "" : " failure=" + failure);
        }
    }

    @Test
    void readOnlyOpenReadsAnInSyncCopyNotTheFencedEmptyQueue() throws Exception {
        ReplicationConfig config = startCluster();
        ReplicatedQueueOpener writerSide = opener(config);
        KvsQueue writer = openUntilOk(writerSide, OpenOptions.writer("james-a", 1)).queue();
        List<String> written = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            put(writer, "m-" + i);
            written.add("m-" + i);
        }
        assertThat(writerSide.managementTable().rows()).extracting(ManagementTable.Row::node)
                .containsExactlyInAnyOrder("kvs2", "kvs3");

        ReplicatedQueueOpener readerSide = opener(config); // another James node reads this log
        OpenResult ro = openUntilOk(readerSide, OpenOptions.reader());
        KvsQueue reader = ro.queue();
        Pass first = scan(reader);
        assertThat(first.failure).as(first.toString()).isNull();
        assertThat(first.reservedSeen).isFalse();
        assertThat(first.ids).as("a read-only reader sees the messages of the copies").containsExactlyElementsOf(written);
        assertThat(reader.put("x".getBytes(), 0, 0, new byte[0], new byte[0]).join().isOk()).isFalse();
        assertThat(reader.stat().join().size()).isEqualTo(written.size());
        assertThat(reader.get(Ids.RECORD_ID).join().status()).isEqualTo(Status.NOT_FOUND);
        assertThat(reader.get("m-3".getBytes(StandardCharsets.UTF_8)).join().isOk()).isTrue();

        // The node serving the reads stops: the reader continues from the other copy, in a new position space.
        String serving = ((ReadOnlyCopy) reader).servingNode().join();
        assertThat(serving).isIn("kvs2", "kvs3");
        int oldSpace = first.spaces.iterator().next();
        servers.remove(serving).close();
        System.out.println("stopped " + serving + ", the node serving the reader");
        for (int i = 0; i < 5; i++) {
            putEventually(writer, "n-" + i); // the writer re-replicates onto kvs1 meanwhile
            written.add("n-" + i);
        }
        Pass after = scanUntil(reader, written, oldSpace);
        assertThat(after.reservedSeen).isFalse();
        String now = ((ReadOnlyCopy) reader).servingNode().join();
        System.out.println("reader now on " + now + ", " + after);
        assertThat(now).isNotEqualTo(serving).isNotNull();
        assertThat(reader.stat().join().size()).isEqualTo(written.size());
        reader.close();
    }

    @Test
    void readOnlyReaderFollowsTheRecordWhenItsCopyIsIsolated() throws Exception {
        startCluster();
        // The writer reaches the nodes through proxies that can cut it off from one node; the reader
        // connects directly, so the copy it reads stays reachable for it after the writer dropped it.
        Map<String, FreezableProxy> proxies = new LinkedHashMap<>();
        for (Map.Entry<String, KvsServer> e : servers.entrySet()) {
            proxies.put(e.getKey(), new FreezableProxy(e.getValue().port()));
        }
        try {
            ReplicatedQueueOpener writerSide = opener(config(name -> proxies.get(name).port()));
            KvsQueue writer = openUntilOk(writerSide, OpenOptions.writer("james-a", 1)).queue();
            List<String> written = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                put(writer, "m-" + i);
                written.add("m-" + i);
            }
            ReplicatedQueueOpener readerSide = opener(config(name -> servers.get(name).port()));
            KvsQueue reader = openUntilOk(readerSide, OpenOptions.reader()).queue();
            Pass first = scan(reader);
            assertThat(first.failure).as(first.toString()).isNull();
            assertThat(first.ids).containsExactlyElementsOf(written);
            String serving = ((ReadOnlyCopy) reader).servingNode().join();
            assertThat(serving).isIn("kvs2", "kvs3");

            // The writer loses that node: it is isolated (its copy goes stale) and the queue is
            // re-replicated onto kvs1; the newest record no longer names it.
            proxies.get(serving).freeze(true);
            System.out.println("writer cut off from " + serving + ", the node serving the reader");
            for (int i = 0; i < 5; i++) {
                putEventually(writer, "n-" + i);
                written.add("n-" + i);
            }
            Pass after = scanUntil(reader, written, first.spaces.iterator().next());
            String now = ((ReadOnlyCopy) reader).servingNode().join();
            System.out.println("reader now on " + now + ", " + after);
            assertThat(now).isNotEqualTo(serving).isNotNull();
            assertThat(after.reservedSeen).isFalse();
        } finally {
            proxies.values().forEach(FreezableProxy::close);
        }
    }

    @Test
    void readOnlyOpenOfAQueueThatDoesNotExist() throws Exception {
        ReplicatedQueueOpener o = opener(startCluster());
        OpenResult r = null;
        for (int i = 0; i < 50; i++) {
            r = o.open("no.such.queue", OpenOptions.reader()).join();
            if (r.status() == Status.NO_SUCH_QUEUE) {
                System.out.println("NO_SUCH_QUEUE after " + (i + 1) + " attempt(s)");
                break;
            }
            Thread.sleep(100);
        }
        assertThat(r.status()).as(r.reason()).isEqualTo(Status.NO_SUCH_QUEUE);
    }
}
