package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recovery as a view change, on real servers: two nodes, a queue with a backlog of 8,000 mails, a
 * writer putting and a consumer reading and deleting (both with requests in flight). kvs2 goes
 * silent (both paths frozen: what was in flight to it never arrives), is isolated, then comes back
 * with its disk. Its (seq, digest) is the writer's at the seq it stopped at, so it gets only the
 * suffix it missed (the DELETEs replayed, the PUTs copied), not CLEAR and the whole queue as with
 * {@code catchUpLogEntries = 0}; then both copies are equal by (seq, digest) and by content
 * (ids at the same positions, in the same order), no acknowledged put is lost, FIFO is kept, and the
 * consumer saw every message once.
 */
class SuffixCatchUpTest extends ClusterRigTest<ProxiedCluster> {
    private static final String Q = "spool.suffix";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int BACKLOG = 8_000;
    private static final Pattern DONE = Pattern.compile("rebuild of kvs2 done: (caught up by the suffix, (\\d+) change\\(s\\) replayed, )?(\\d+) message\\(s\\) copied");

    @Test
    void aCopyBackWithItsDiskGetsOnlyTheSuffixItMissed() throws Exception {
        Matcher done = leaveAndComeBack(c -> c);
        assertThat(done.group(1)).as("caught up by the suffix: " + done.group()).isNotNull();
        long replayed = Long.parseLong(done.group(2));
        long copied = Long.parseLong(done.group(3));
        assertThat(replayed + copied).as("what it missed was in flight when it went silent").isPositive()
                .isLessThan(500);
    }

    @Test
    void withoutTheLogTheSameCopyIsRebuiltInFull() throws Exception {
        Matcher done = leaveAndComeBack(c -> c.withCatchUpLogEntries(0));
        assertThat(done.group(1)).as(done.group()).isNull();
        assertThat(Long.parseLong(done.group(3))).as("the whole queue copied").isGreaterThan(1_000);
    }

    private Matcher leaveAndComeBack(UnaryOperator<ReplicationConfig> tune) throws Exception {
        cluster = new ProxiedCluster(dir, 2, tune);
        KvsQueue q = cluster.openWriter(Q, "james-a");
        PutLedger backlog = new PutLedger();
        new PutLoad(backlog, Map.of(Q, q), "backlog-", 64, 1024, BACKLOG).awaitOutcomes(WAIT);
        assertThat(backlog.failures()).isEmpty();

        int mark = cluster.events.size();
        Consumer consumer = new Consumer(q);
        Thread consuming = new Thread(consumer, "consumer");
        consuming.start();
        PutLoad live = new PutLoad(ledger, Map.of(Q, q), "live-", 16, 1024, 1_000_000);
        live.awaitAcknowledged(300, WAIT);
        consumer.awaitConsumed(300, WAIT);

        cluster.freezeNode("kvs2", true); // silent: requests in flight to it never arrive
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": isolate kvs2"), WAIT, "kvs2 isolated");
        for (NodePath p : NodePath.values()) {
            cluster.cut("kvs2", p, true); // what the frozen paths held is dropped with their connections
        }
        for (NodePath p : NodePath.values()) {
            cluster.cut("kvs2", p, false);
            cluster.freeze("kvs2", p, false);
        }
        int started = cluster.awaitEventIndex(mark, e -> e.startsWith(Q + ": rebuild kvs2 from kvs1"), WAIT, "kvs2 back");
        int doneAt = cluster.awaitEventIndex(started, e -> e.startsWith(Q + ": rebuild of kvs2 done"), WAIT, "kvs2 in sync");
        String doneEvent = cluster.events.get(doneAt);
        // The figure of the report: the copy's time from its return (the rebuild's start) to in sync.
        System.out.printf("copy back on kvs2 under load (%,d-mail backlog, puts and deletes in flight): in sync after %d ms"
                + " (%s)%n", BACKLOG, (cluster.eventNanos(doneAt) - cluster.eventNanos(started)) / 1_000_000, doneEvent);
        System.out.println("events: " + cluster.eventsMatching(mark, e -> e.startsWith(Q)));
        live.awaitAcknowledged(live.acknowledged() + 100, WAIT);
        live.finish(WAIT);
        consumer.stop(consuming);

        assertThat(cluster.awaitTwoSyncCopies(Q, WAIT)).containsExactlyInAnyOrder("kvs1", "kvs2");
        assertThat(identity("kvs2")).as("both copies equal by (seq, digest)").isEqualTo(identity("kvs1"));
        LinkedHashMap<String, Long> one = cluster.positionsOnCopy("kvs1", Q);
        assertThat(new ArrayList<>(cluster.positionsOnCopy("kvs2", Q).entrySet()))
                .as("the same messages at the same positions, in the same order").isEqualTo(new ArrayList<>(one.entrySet()));
        assertThat(consumer.seen).as("the consumer saw every message once").doesNotHaveDuplicates();
        for (String node : List.of("kvs1", "kvs2")) {
            List<String> seen = new ArrayList<>(consumer.seen); // consumed (and deleted), then what is left
            seen.addAll(cluster.readCopy(node, Q));
            for (PutLedger l : List.of(backlog, ledger)) {
                PutLedger.Check c = l.check("consumed + copy on " + node, Q, seen);
                assertThat(c.lost()).isZero();
                assertThat(c.duplicated()).isZero();
                assertThat(c.orderBreaks()).isZero();
            }
        }
        Matcher m = DONE.matcher(doneEvent);
        assertThat(m.find()).as(doneEvent).isTrue();
        return m;
    }

    /** The copy's content identity as its server answers it (a plain STAT, straight from the node). */
    private List<Long> identity(String node) {
        try (KvsClient c = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(cluster.serverPort(node))
                .credentials("james", ClusterRig.PASSWORD).build())) {
            QueueStat s = c.open(Q, OpenOptions.reader()).join().orThrow().stat().join();
            return List.of(s.lastSeq(), s.digest());
        }
    }

    /** Reads the queue through the writer in order and deletes what it read (a delete that fails is sent again). */
    private static final class Consumer implements Runnable {
        private final KvsQueue q;
        final List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean stop = new AtomicBoolean();
        private volatile Throwable failure;

        Consumer(KvsQueue q) {
            this.q = q;
        }

        @Override
        public void run() {
            long from = 0;
            List<byte[]> undeleted = new ArrayList<>();
            try {
                for (int round = 0; round < 1_000_000 && !(stop.get() && undeleted.isEmpty()); round++) {
                    List<byte[]> batch = new ArrayList<>(undeleted);
                    undeleted.clear();
                    if (!stop.get()) {
                        ReadResult rr = q.read(from, 16, 1 << 20, 0).get(60, TimeUnit.SECONDS);
                        if (rr.isOk()) {
                            for (StoredMessage m : rr.messages()) {
                                seen.add(new String(m.id(), StandardCharsets.UTF_8));
                                batch.add(m.id());
                            }
                            from = rr.nextPosition();
                        }
                    }
                    List<CompletableFuture<Ack>> deletes = new ArrayList<>();
                    for (byte[] id : batch) {
                        deletes.add(q.delete(id));
                    }
                    for (int i = 0; i < batch.size(); i++) {
                        Ack a = deletes.get(i).get(60, TimeUnit.SECONDS);
                        if (!a.isOk() && a.status() != org.jameskvs.protocol.Status.NOT_FOUND) {
                            undeleted.add(batch.get(i));
                        }
                    }
                    Thread.sleep(undeleted.isEmpty() ? 20 : 100);
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void awaitConsumed(int n, Duration max) throws InterruptedException {
            long deadline = System.nanoTime() + max.toNanos();
            while (seen.size() < n && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(seen.size()).as("consumed").isGreaterThanOrEqualTo(n);
        }

        void stop(Thread t) throws InterruptedException {
            stop.set(true);
            t.join(WAIT.toMillis());
            assertThat(t.isAlive()).as("consumer stopped").isFalse();
            assertThat(failure).isNull();
        }
    }
}
