package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.testkit.FreezableProxy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A takeover's epoch known only to a disk that is then lost. Two real server processes. James A
 * owns the queue on both; kvs2 goes down; James B takes the queue over and can fence only kvs1;
 * B's paths freeze (a paused James, or a partition: B keeps running, unaware of what follows);
 * kvs1 then loses its disk, so B's epoch is known to B alone; kvs2 comes back with A's epoch.
 * A, restarted, takes the queue back. "One above the highest epoch seen" would be B's own counter (and the
 * random process id would decide which of the two is higher: a writer still running over a newer
 * owner); the open sees that kvs1 lost its disk since the newest record and fences again
 * {@link Epochs#LOST_DISK_MARGIN} higher. Then B's paths come back: B is fenced and acknowledges
 * nothing, A's writes go on, and the mail acknowledged before is on both copies: lost 0.
 */
class LostTakeoverEpochTest extends ClusterRigTest<ProcessCluster> {
    private static final String Q = "spool.lost-epoch";
    private static final Duration WAIT = Duration.ofSeconds(90);

    @Test
    void aTakeoverEpochLostWithADiskIsFencedByTheNextOwner() throws Exception {
        KvsQueue a = startWithABacklog();
        long recordEpoch = ((ReplicatedQueue) a).epoch(); // of the newest record kvs2 will hold

        // James B reaches each node through its own freezable path.
        List<FreezableProxy> bPaths = new ArrayList<>();
        List<ReplicationConfig.NodeSpec> bNodes = new ArrayList<>();
        for (String node : List.of("kvs1", "kvs2")) {
            FreezableProxy p = new FreezableProxy(cluster.serverPort(node));
            bPaths.add(p);
            bNodes.add(new ReplicationConfig.NodeSpec(node, "127.0.0.1", p.port(), "127.0.0.1", p.port()));
        }
        ReplicatedQueueOpener b = ReplicatedQueueOpener.start(ReplicationConfig.of(bNodes, "james", ClusterRig.PASSWORD));
        List<String> bEvents = new java.util.concurrent.CopyOnWriteArrayList<>();
        b.listen(bEvents::add);
        try {
            KvsQueue bq = takeOverWithKvs2Down(b, 1);
            long lostEpoch = ((ReplicatedQueue) bq).epoch();
            System.out.println("B took the queue over at epoch " + lostEpoch + " (fenced kvs1 only)");
            a.close(); // A's James stops (fenced by B); restarted below. Left open, its reclaims would
            // fence kvs1's new store at higher epochs and hide the lost one from the open under test.

            // B keeps running, unheard from here on: it does not see kvs1's new store, so it does
            // not reclaim (a reclaim would fence the new store higher and hide the lost epoch).
            bPaths.forEach(p -> p.freeze(true));
            cluster.kill9("kvs1");
            cluster.wipe("kvs1");
            cluster.restart("kvs1");
            cluster.restart("kvs2");

            cluster.restartOpener(); // A's James starts again
            int before = cluster.events.size();
            OpenResult taken = cluster.opener.takeOver(Q, OpenOptions.writer("james-a", 1)).join();
            assertThat(taken.isOk()).as("A's first attempt, both nodes up: " + taken.reason()).isTrue();
            KvsQueue a2 = taken.queue();
            System.out.println("events: " + cluster.eventsMatching(before, e -> e.startsWith(Q)));
            long aEpoch = ((ReplicatedQueue) a2).epoch();
            assertThat(aEpoch).as("A's new epoch against B's lost one (" + lostEpoch + ")")
                    .isGreaterThan(lostEpoch)
                    .as("A's new epoch: the newest record's (" + recordEpoch + ") + the margin")
                    .isEqualTo(recordEpoch + Epochs.LOST_DISK_MARGIN);
            assertThat(cluster.eventsMatching(before, e -> e.startsWith(Q) && e.contains("kvs1 lost its disk since the newest record")))
                    .as("the lost disk seen by the open").isNotEmpty();

            bPaths.forEach(p -> p.freeze(false));
            // B's puts are refused while it waits for a copy, then because A's epoch fenced it.
            Ack fromB = null;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                fromB = bq.put("from-b".getBytes(), 0, 0, new byte[0], new byte[16]).join();
                assertThat(fromB.isOk()).as("a put by B, whose epoch was lost").isFalse();
                if (fromB.status() == Status.STALE_EPOCH) {
                    break;
                }
                Thread.sleep(200);
            }
            assertThat(fromB.status()).as("B fenced; B's last answer " + fromB + "; its events: " + bEvents)
                    .isEqualTo(Status.STALE_EPOCH);

            new PutLoad(ledger, Map.of(Q, a2), "after-", 16, 1024, 200).awaitOutcomes(WAIT);
            assertThat(ledger.failures()).as("A's puts after taking the queue back").isEmpty();
            assertBothCopiesHoldThe700();
            assertThat(ledger.check("reader", Q, ClusterRig.readAll(a2)).lost()).isZero();
        } finally {
            b.close();
            bPaths.forEach(FreezableProxy::close);
        }
    }

    /**
     * The same loss, but the node that was down comes back while the wiped one is still down: A's
     * open hears kvs2 alone and cannot see B's epoch (B chose a high counter, so A's is surely lower).
     * Still one writer acknowledges: B's only copy was on kvs1, so from the wipe on B acknowledges
     * nothing; with kvs1 back (a new store) B's OPEN there names the store it knew and is refused
     * (STORE_CHANGED) instead of fencing, with B's higher epoch, the queue A is rebuilding there; B
     * finds its copy gone, fails to reclaim against A's lease and stops. A is never fenced and takes
     * puts again; the mail acknowledged before is on both copies: lost 0. (Before OPEN named its
     * store, B's OPEN fenced A on kvs1 and both writers ended fenced.)
     */
    @Test
    void anOpenThatCannotSeeTheLostEpochIsStillTheOnlyWriterThatAcknowledges() throws Exception {
        KvsQueue a = startWithABacklog();
        ReplicatedQueueOpener b = ReplicatedQueueOpener.start(cluster.config);
        List<String> bEvents = new java.util.concurrent.CopyOnWriteArrayList<>();
        b.listen(bEvents::add);
        try {
            KvsQueue bq = takeOverWithKvs2Down(b, 1000);
            long lostEpoch = ((ReplicatedQueue) bq).epoch();
            a.close();

            cluster.kill9("kvs1");
            cluster.wipe("kvs1");
            cluster.restart("kvs2"); // back first: kvs1 stays down
            cluster.restartOpener(1);
            KvsQueue a2 = awaitOpen(() -> cluster.opener.takeOver(Q, OpenOptions.writer("james-a", 1)).join(),
                    "A's takeover hearing kvs2 alone");
            long aEpoch = ((ReplicatedQueue) a2).epoch();
            assertThat(aEpoch).as("A's epoch, which cannot see B's lost one").isLessThan(lostEpoch);

            assertThat(b.awaitConnected(1, WAIT)).as("B hears kvs2 again").isTrue();
            Ack fromB = bq.put("from-b-1".getBytes(), 0, 0, new byte[0], new byte[16]).join();
            assertThat(fromB.isOk()).as("a put by B while its only copy's node is down: " + fromB).isFalse();

            int bSeen = bEvents.size();
            int aSeen = cluster.events.size();
            cluster.restart("kvs1"); // with a new store
            long deadline = System.nanoTime() + WAIT.toNanos();
            int n = 2;
            while (bEvents.subList(bSeen, bEvents.size()).stream().noneMatch(e -> e.contains(": fenced: "))) {
                assertThat(System.nanoTime()).as("B stopped; its events: " + bEvents).isLessThan(deadline);
                fromB = bq.put(("from-b-" + n++).getBytes(), 0, 0, new byte[0], new byte[16]).join();
                assertThat(fromB.isOk()).as("a put by B, whose copy went with kvs1's disk: " + fromB).isFalse();
                Thread.sleep(100);
            }
            fromB = bq.put("from-b-last".getBytes(), 0, 0, new byte[0], new byte[16]).join();
            assertThat(fromB.isOk()).as("a put by B once stopped: " + fromB).isFalse();

            assertThat(bEvents.subList(bSeen, bEvents.size())).as("B's OPEN on kvs1's new store, then its stop")
                    .anyMatch(e -> e.contains("kvs1 lost its disk") && e.contains("STORE_CHANGED"))
                    .anyMatch(e -> e.contains(": fenced: reclaim refused: QUEUE_LOCKED owned by james-a"));
            Ack fromA = null;
            while (fromA == null || !fromA.isOk()) {
                assertThat(System.nanoTime()).as("A's puts resume; last " + fromA).isLessThan(deadline);
                fromA = a2.put("a-probe".getBytes(), 0, 0, new byte[0], new byte[16]).join();
                if (!fromA.isOk()) {
                    Thread.sleep(200);
                }
            }
            new PutLoad(ledger, Map.of(Q, a2), "after-", 16, 1024, 200).awaitOutcomes(WAIT);
            assertThat(ledger.failures()).as("A's puts after B stopped").isEmpty();
            assertBothCopiesHoldThe700();
            assertThat(cluster.eventsMatching(aSeen, e -> e.startsWith(Q) && e.contains(": fenced: ")))
                    .as("A, the only writer that can acknowledge, never fenced").isEmpty();
        } finally {
            b.close();
        }
    }

    /** Two in-sync copies again, each with every one of the 700 acknowledged puts. */
    private void assertBothCopiesHoldThe700() throws InterruptedException {
        for (String node : cluster.awaitTwoSyncCopies(Q, WAIT)) {
            PutLedger.Check c = ledger.check("copy on " + node, Q, cluster.readCopy(node, Q));
            assertThat(c.acknowledged()).isEqualTo(700);
            assertThat(c.lost()).as("acknowledged puts missing on " + node).isZero();
        }
    }

    /** Two server processes; James A owns the queue on both and has 500 puts acknowledged. */
    private KvsQueue startWithABacklog() throws Exception {
        cluster = new ProcessCluster(dir, 2, c -> c);
        KvsQueue a = cluster.openWriter(Q, "james-a");
        new PutLoad(ledger, Map.of(Q, a), "before-", 16, 1024, 500).awaitOutcomes(WAIT);
        assertThat(ledger.failures()).isEmpty();
        assertThat(ledger.acknowledged(Q)).isEqualTo(500);
        return a;
    }

    /** kvs2 killed and isolated by A; then James B takes the queue over, fencing kvs1 only, at counter {@code counter} or above. */
    private KvsQueue takeOverWithKvs2Down(ReplicatedQueueOpener b, long counter) throws InterruptedException {
        assertThat(b.awaitConnected(2, WAIT)).as("B connected to both nodes").isTrue();
        int mark = cluster.events.size();
        cluster.kill9("kvs2");
        cluster.awaitEvent(mark, e -> e.startsWith(Q + ": isolate kvs2"), WAIT, "kvs2 isolated by A");
        return awaitOpen(() -> b.takeOver(Q, OpenOptions.writer("james-b", counter)).join(), "B's takeover with kvs2 down");
    }

    private static KvsQueue awaitOpen(java.util.function.Supplier<OpenResult> open, String what) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 300; i++) {
            r = open.get();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(200);
        }
        throw new AssertionError(what + " failed: " + r.status() + " " + r.reason());
    }
}
