package org.jameskvs.replication;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 10, item 8: a queue that exists nowhere yet (a new priority level, a new repository) is
 * created while a node its placement rule names is down (SIGKILL of a real server process): it goes
 * to two reachable nodes, puts are acknowledged, and once the node is back, a fresh adapter (another
 * James process) finds the copies where they are, not where the rule would put them, for writing and
 * read-only, with every acknowledged message; the returning node gets no copy. Two adapters creating
 * the same queue at once while the node is down end with one owner and one pair of copies.
 */
class NewQueueWithNodeDownTest extends ClusterRigTest<ProcessCluster> {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PUTS = 2_000;

    private final List<ReplicatedQueueOpener> others = new ArrayList<>();

    /** Before the cluster closes (a subclass's {@code @AfterEach} runs before its superclass's). */
    @AfterEach
    void closeOtherAdapters() {
        others.forEach(ReplicatedQueueOpener::close);
    }

    @Test
    void aNewQueueIsCreatedOnTwoReachableNodesAndFoundThereByAFreshAdapterAfterTheNodeIsBack() throws Exception {
        String q = "mail/queue/spool@p7";
        String victim = startWithFirstOfPairDown(q);

        KvsQueue writer = cluster.openWriter(q, "james-a");
        cluster.awaitEvent(0, e -> e.startsWith(q + ": new queue with " + victim + " down"), WAIT,
                "created with " + victim + " down");
        List<String> copies = cluster.awaitTwoSyncCopies(q, WAIT);
        assertThat(copies).as("the copies skip the node that is down").doesNotContain(victim).hasSize(2);
        new PutLoad(ledger, Map.of(q, writer), "down-", 64, 1024, PUTS).awaitOutcomes(WAIT);
        assertThat(ledger.failures()).as("puts with one node of the rule's pair down").isEmpty();
        assertThat(ledger.acknowledged(q)).isEqualTo(PUTS);

        // A read-only reader of another process while the node is still down (as an OR-set log reader).
        ReplicatedQueueOpener whileDown = ReplicatedQueueOpener.start(cluster.config);
        others.add(whileDown);
        assertThat(whileDown.awaitConnected(2, WAIT)).isTrue();
        KvsQueue early = openUntilOk(whileDown, q, OpenOptions.reader()).queue();
        assertThat(ledger.check("read-only reader while " + victim + " is down", q, ClusterRig.readAll(early)).lost()).isZero();
        early.close();

        int mark = restartAndAwaitBack(victim);
        // The writer leaves its trace there: a later open with nodes down must not take the queue for new.
        cluster.awaitEvent(mark, e -> e.equals(q + ": trace of the queue left on " + victim + " (down at creation)"),
                WAIT, "trace on " + victim);
        assertThat(cluster.hasQueue(victim, q)).as("an empty queue on " + victim + ", no copy").isTrue();
        writer.close();

        // A fresh adapter (another James process, or this one restarted) reads the queue read-only.
        ReplicatedQueueOpener fresh = opener();
        KvsQueue reader = openUntilOk(fresh, q, OpenOptions.reader()).queue();
        PutLedger.Check read = ledger.check("read-only reader after " + victim + " is back", q, ClusterRig.readAll(reader));
        assertThat(read.lost()).isZero();
        assertThat(read.duplicated()).isZero();
        reader.close();

        // ... and reopens it for writing (a reclaim: fences every node, the returning one included).
        KvsQueue reopened = openUntilOk(fresh, q, OpenOptions.writer("james-a", 1)).queue();
        List<String> members = fresh.managementTable().rows().stream()
                .filter(r -> r.queue().equals(q) && r.sync() == SyncState.SYNC).map(ManagementTable.Row::node).toList();
        assertThat(members).as("the newest record names the copies, not the rule").containsExactlyInAnyOrderElementsOf(copies);
        PutLedger.Check again = ledger.check("writer reopened by a fresh adapter", q, ClusterRig.readAll(reopened));
        assertThat(again.lost()).isZero();
        for (String node : copies) {
            assertThat(ledger.check("copy on " + node, q, cluster.readCopy(node, q)).lost()).isZero();
        }
        assertThat(copyOrNone(victim, q)).as("the returning node got no copy").isEmpty();
    }

    @Test
    void twoAdaptersCreatingTheSameQueueWithANodeDownEndWithOneOwnerAndOnePair() throws Exception {
        String q = "mail/repository/error";
        String victim = startWithFirstOfPairDown(q);
        // Started while the node is down: it presumes every node up until its heartbeat says otherwise.
        ReplicatedQueueOpener second = openerWhileDown(victim);

        // Both at once, as two James nodes starting with the same configuration.
        CompletableFuture<OpenResult> a = cluster.opener.open(q, OpenOptions.writer("james-a", 1));
        CompletableFuture<OpenResult> b = second.open(q, OpenOptions.writer("james-b", 1));
        OpenResult ra = a.join(), rb = b.join();
        System.out.println("racing opens: james-a " + ra.status() + " " + ra.reason() + "; james-b " + rb.status() + " "
                + rb.reason());
        // Retried as James does until one of them holds the queue; the other must then be refused.
        KvsQueue winner = ra.isOk() ? ra.queue() : rb.isOk() ? rb.queue() : null;
        ReplicatedQueueOpener winnerSide = ra.isOk() ? cluster.opener : second;
        for (int i = 0; winner == null && i < 300; i++) {
            Thread.sleep(100);
            OpenResult r = cluster.opener.open(q, OpenOptions.writer("james-a", 1)).join();
            winner = r.isOk() ? r.queue() : null;
            winnerSide = cluster.opener;
        }
        assertThat(winner).as("one of the racing creators holds the queue").isNotNull();
        String loserOwner = winnerSide == cluster.opener ? "james-b" : "james-a";
        ReplicatedQueueOpener loserSide = winnerSide == cluster.opener ? second : cluster.opener;
        OpenResult late = loserSide.open(q, OpenOptions.writer(loserOwner, 1)).join();
        assertThat(late.isOk()).as("the other creator is refused: " + late.status() + " " + late.reason()).isFalse();

        new PutLoad(ledger, Map.of(q, winner), "race-", 32, 1024, 500).awaitOutcomes(WAIT);
        assertThat(ledger.failures()).isEmpty();
        List<String> holding = new ArrayList<>();
        for (String node : List.of("kvs1", "kvs2", "kvs3")) {
            if (!node.equals(victim) && !copyOrNone(node, q).isEmpty()) {
                holding.add(node);
            }
        }
        assertThat(holding).as("one pair of copies").hasSize(2);

        restartAndAwaitBack(victim);
        ReplicatedQueueOpener fresh = opener();
        KvsQueue reader = openUntilOk(fresh, q, OpenOptions.reader()).queue();
        PutLedger.Check read = ledger.check("fresh reader after the race", q, ClusterRig.readAll(reader));
        assertThat(read.lost()).isZero();
        assertThat(read.acknowledged()).isEqualTo(500);
        assertThat(copyOrNone(victim, q)).as("the returning node holds no copy").isEmpty();
    }

    /**
     * A queue opened before (all nodes up: every node fenced, the non-member kvs3 holds an empty
     * queue) whose node kvs1 is down while the other copy's node kvs2 lost its disk: the nodes heard
     * hold no record, yet the queue is not taken for a new one (kvs3's trace of the earlier open);
     * the open waits, and once kvs1 is back every acknowledged message is there.
     */
    @Test
    void aQueueOpenedBeforeIsNotCreatedAgainOverALostDisk() throws Exception {
        String q = "mail/repository/var";
        cluster = new ProcessCluster(dir, 3, c -> c.withPlacement(ReplicationConfig.PlacementRule.SPREAD,
                Map.of(q, List.of("kvs1", "kvs2"))));
        KvsQueue first = cluster.openWriter(q, "james-a");
        new PutLoad(ledger, Map.of(q, first), "first-", 16, 1024, 50).awaitOutcomes(WAIT);
        assertThat(ledger.acknowledged(q)).isEqualTo(50);
        first.close();
        killAndAwaitDown("kvs1");
        wipeAndRestart("kvs2");

        ReplicatedQueueOpener second = openerWhileDown("kvs1");
        OpenResult refused = second.open(q, OpenOptions.writer("james-a", 1)).join();
        assertThat(refused.isOk()).as("not created again while its copy's node is down").isFalse();
        assertThat(refused.reason()).contains("an earlier open left the queue");

        restartAndAwaitBack("kvs1");
        KvsQueue reopened = openUntilOk(second, q, OpenOptions.writer("james-a", 1)).queue();
        PutLedger.Check c = ledger.check("reopened once kvs1 is back", q, ClusterRig.readAll(reopened));
        assertThat(c.lost()).isZero();
        assertThat(c.acknowledged()).isEqualTo(50);
    }

    /**
     * What the rule cannot see: a queue created while kvs1 was down (so kvs1 holds no trace of it),
     * then its node kvs3 down and the other copy's node kvs2 wiped: the nodes heard (kvs1, kvs2) hold
     * nothing, and the queue is created again. Once kvs3 is back, the open that sees both creations
     * says so with an ALARM naming the copies of the other creation that still hold messages (which
     * creation wins depends on the two processes' epochs: either way one is reported).
     */
    @Test
    void aQueueCreatedAgainOverALostDiskIsReportedWhenTheOldCopyComesBack() throws Exception {
        String q = "mail/repository/relay-denied";
        cluster = new ProcessCluster(dir, 3, c -> c.withPlacement(ReplicationConfig.PlacementRule.SPREAD,
                Map.of(q, List.of("kvs1", "kvs2"))));
        killAndAwaitDown("kvs1");
        KvsQueue first = cluster.openWriter(q, "james-a");
        assertThat(cluster.awaitTwoSyncCopies(q, WAIT)).containsExactlyInAnyOrder("kvs2", "kvs3");
        new PutLoad(ledger, Map.of(q, first), "first-", 16, 1024, 50).awaitOutcomes(WAIT);
        assertThat(ledger.acknowledged(q)).isEqualTo(50);
        first.close();
        restartAndAwaitBack("kvs1");
        killAndAwaitDown("kvs3");
        wipeAndRestart("kvs2");

        ReplicatedQueueOpener second = openerWhileDown("kvs3");
        List<String> secondEvents = new CopyOnWriteArrayList<>();
        second.listen(secondEvents::add);
        KvsQueue again = openUntilOk(second, q, OpenOptions.writer("james-a", 1)).queue();
        assertThat(secondEvents).anyMatch(e -> e.startsWith(q + ": new queue with kvs3 down"));
        // Acknowledged in the second creation: whichever creation's record turns out newer, the other
        // one's copies hold messages that are not served.
        assertThat(again.put("second-0".getBytes(), 0, 0, new byte[0], new byte[10]).join().isOk()).isTrue();
        again.close();

        restartAndAwaitBack("kvs3");
        List<String> thirdEvents = new CopyOnWriteArrayList<>();
        ReplicatedQueueOpener third = opener(thirdEvents);
        OpenResult taken = null;
        for (int i = 0; i < 300 && (taken == null || !taken.isOk()); i++) {
            taken = third.takeOver(q, OpenOptions.writer("james-c", 1)).join();
        }
        assertThat(taken.isOk()).as(taken.status() + " " + taken.reason()).isTrue();
        assertThat(thirdEvents).as("the other creation's messages are reported")
                .anyMatch(e -> e.startsWith(q + ": ALARM: the copy on ") && e.contains("messages of another creation"));
    }

    /** A three-node cluster, the first node of {@code q}'s placement pair killed and declared down: that node. */
    private String startWithFirstOfPairDown(String q) throws Exception {
        cluster = new ProcessCluster(dir, 3, c -> c);
        String victim = new Placement(cluster.config).pair(q).get(0);
        killAndAwaitDown(victim);
        return victim;
    }

    /** Restarts a killed node and waits (bounded) until the cluster's adapter has it READY again; the events mark before the restart. */
    private int restartAndAwaitBack(String node) throws Exception {
        int mark = cluster.events.size();
        cluster.restart(node);
        cluster.awaitEvent(mark, e -> e.equals(node + "/ACTIVE READY again"), WAIT, node + " back");
        return mark;
    }

    /**
     * Kill -9, declared down, data directory deleted, restarted, READY again. Waiting for "down"
     * first: a restart faster than the heartbeat's timeout is never seen as down, and no "READY
     * again" would follow.
     */
    private void wipeAndRestart(String node) throws Exception {
        killAndAwaitDown(node);
        int mark = cluster.events.size();
        cluster.wipe(node);
        cluster.restart(node);
        cluster.awaitEvent(mark, e -> e.equals(node + "/ACTIVE READY again"), WAIT, node + " back, empty");
    }

    /** Another adapter started while {@code down} is down, once its heartbeat has declared it down. */
    private ReplicatedQueueOpener openerWhileDown(String down) throws InterruptedException {
        List<String> events = new CopyOnWriteArrayList<>();
        ReplicatedQueueOpener o = ReplicatedQueueOpener.start(cluster.config);
        others.add(o);
        o.listen(events::add);
        assertThat(o.awaitConnected(2, WAIT)).isTrue();
        awaitDown(events, down);
        return o;
    }

    private void killAndAwaitDown(String node) throws Exception {
        int mark = cluster.events.size();
        cluster.kill9(node);
        cluster.awaitEvent(mark, e -> e.equals(node + "/ACTIVE NG"), WAIT, node + "/ACTIVE NG");
        cluster.awaitEvent(mark, e -> e.equals(node + "/STANDBY NG"), WAIT, node + "/STANDBY NG");
    }

    /** Waits (bounded) until the adapter's heartbeat declares both paths of the node NG (events since {@code seen} listens). */
    private static void awaitDown(List<String> seen, String node) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!(seen.contains(node + "/ACTIVE NG") && seen.contains(node + "/STANDBY NG"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(node + " not declared down within " + WAIT + ": " + seen);
            }
            Thread.sleep(20);
        }
    }

    /** The node's copy (ids, record left out); empty when the node has no queue of that name. */
    private List<String> copyOrNone(String node, String q) {
        return cluster.hasQueue(node, q) ? cluster.readCopy(node, q) : List.of();
    }

    /** Another adapter on the same group (another James process), once it reaches every node. */
    private ReplicatedQueueOpener opener() throws InterruptedException {
        return opener(new CopyOnWriteArrayList<>());
    }

    /** {@link #opener()}, its events (from its start) into {@code events}. */
    private ReplicatedQueueOpener opener(List<String> events) throws InterruptedException {
        ReplicatedQueueOpener o = ReplicatedQueueOpener.start(cluster.config);
        others.add(o);
        o.listen(events::add);
        assertThat(o.awaitConnected(3, WAIT)).as("fresh adapter connected to the three nodes").isTrue();
        return o;
    }

    private static OpenResult openUntilOk(ReplicatedQueueOpener o, String q, OpenOptions options) throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 300; i++) {
            r = o.open(q, options).join();
            if (r.isOk()) {
                return r;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("open of " + q + " failed: " + r.status() + " " + r.reason());
    }
}
