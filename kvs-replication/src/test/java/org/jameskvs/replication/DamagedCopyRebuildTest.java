package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.server.storage.JournalDamage;
import org.jameskvs.server.storage.RollingJournalServers;
import org.jameskvs.testkit.FreePorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A copy whose server lost journal records of it (a bit flipped in an older journal file: a PUT
 * and/or a DELETE gone) still answers the transaction number of an intact copy; only the DAMAGED
 * queue flag tells. Two real in-process servers, each journal rolling to a new file between two
 * batches of writes (a clock the test advances), so the damage hits an older file, whose replay
 * goes on past it. After a restart of the damaged node, a restarted owner's open (the real adapter)
 * must never take the damaged copy as in sync: it rebuilds it from the intact one, and both copies
 * then hold exactly the acknowledged live messages, in order.
 */
class DamagedCopyRebuildTest {
    private static final String PASSWORD = "secret";
    private static final String Q = "spool.damaged";
    private static final List<String> NODES = List.of("kvs1", "kvs2");

    @TempDir
    Path dir;

    /** Their journals roll to a new file when the test advances their clock. */
    private RollingJournalServers servers;
    private final List<String> events = new CopyOnWriteArrayList<>();
    private ReplicationConfig config;
    private ReplicatedQueueOpener opener;

    @BeforeEach
    void setUp() {
        servers = new RollingJournalServers(dir, PASSWORD);
    }

    @AfterEach
    void tearDown() {
        if (opener != null) {
            opener.close();
        }
        servers.close();
    }

    /** Lost DELETE: the damaged copy holds one message more, which made it look ahead, so it was the source. */
    @Test
    void aCopyThatLostADeleteIsRebuiltNotTrusted() throws Exception {
        damagedCopyIsRebuiltNotTrusted("kvs2", "kvs1", false);
    }

    /**
     * Lost PUT and lost DELETE: same size and transaction number as the intact copy, so nothing but
     * the flag tells them apart, and the tie went to kvs1 (first member), the damaged one here.
     */
    @Test
    void aCopyThatLostAPutAndADeleteIsRebuiltNotTrusted() throws Exception {
        damagedCopyIsRebuiltNotTrusted("kvs1", "kvs2", true);
    }

    /**
     * The copy on {@code damaged} loses a DELETE (and a PUT, if {@code alsoLostPut}) in its older
     * journal file while the node is down; the restarted owner must rebuild it from {@code intact}.
     */
    private void damagedCopyIsRebuiltNotTrusted(String damaged, String intact, boolean alsoLostPut) throws Exception {
        List<String> live = writeTwoBatchesAndStop(damaged);
        damageOlderFile(damaged, alsoLostPut);
        servers.restart(damaged);
        assertDamagedWithSameTransaction(damaged, intact);

        reopenAsRestartedOwner();
        awaitEvent(e -> e.contains("rebuild of") && e.contains("done"), "a copy rebuilt");
        assertBothCopiesHoldExactly(live);
        awaitEvent(e -> e.contains("DAMAGED copy on " + damaged), "damaged copy detected");
        awaitEvent(e -> e.contains("rebuild of " + damaged + " done"), damaged + " rebuilt");
    }

    /**
     * After the rebuild of a copy that lost a record in an older journal file, the copies are equal
     * by content: same (epoch, last seq, digest), the rebuilt one having taken over its source's at
     * the end of the copy (REBASE). So the next restarted owner keeps both as they are: no copy is
     * CLEARed (every rebuild starts with one) and both are SYNC.
     */
    @Test
    void aRebuiltCopyIsEqualByContentAndKeptAtTheNextOpen() throws Exception {
        List<String> live = writeTwoBatchesAndStop("kvs2");
        damageOlderFile("kvs2", true);
        servers.restart("kvs2");
        assertDamagedWithSameTransaction("kvs2", "kvs1");

        reopenAsRestartedOwner();
        awaitEvent(e -> e.contains("rebuild of kvs2 done"), "kvs2 rebuilt");
        assertBothCopiesHoldExactly(live);
        opener.close(); // the writer goes: nothing changes the copies while they are compared
        opener = null;
        QueueStat one = stat("kvs1");
        QueueStat two = stat("kvs2");
        assertThat(new long[] {Epochs.fencingOf(two.epoch()), two.lastSeq(), two.digest()}).as("kvs2 rebuilt vs kvs1")
                .containsExactly(Epochs.fencingOf(one.epoch()), one.lastSeq(), one.digest());

        Map<String, Long> clears = new LinkedHashMap<>();
        NODES.forEach(n -> clears.put(n, requests(n, "CLEAR")));
        events.clear();
        reopenAsRestartedOwner();
        awaitTwoSyncCopies();
        NODES.forEach(n -> assertThat(requests(n, "CLEAR")).as("CLEARs on %s (a rebuild)", n).isEqualTo(clears.get(n)));
        assertThat(events).noneMatch(e -> e.contains("copies differ"));
        assertBothCopiesHoldExactly(live);
    }

    /**
     * The intact copy's node is away: the damaged one must not become the authority (it would later
     * be copied over the intact one). The open waits, and succeeds once the intact copy is back.
     */
    @Test
    void aDamagedCopyAloneDoesNotOpenWhileTheIntactOneIsAway() throws Exception {
        List<String> live = writeTwoBatchesAndStop("kvs2");
        damageOlderFile("kvs2", false);
        servers.stop("kvs1");
        servers.restart("kvs2");

        opener = ReplicatedQueueOpener.start(config);
        opener.listen(events::add);
        assertThat(opener.awaitConnected(1, Duration.ofSeconds(30))).as("connected to kvs2").isTrue();
        OpenResult refused = opener.open(Q, OpenOptions.writer("james-a", 2)).get(30, TimeUnit.SECONDS);
        assertThat(refused.isOk()).as("open with only the damaged copy reachable").isFalse();
        assertThat(refused.reason()).contains("DAMAGED", "waiting for the one on kvs1");

        servers.restart("kvs1");
        openWhenConnected();
        awaitEvent(e -> e.contains("rebuild of kvs2 done"), "kvs2 rebuilt");
        assertBothCopiesHoldExactly(live);
    }

    /** Both copies damaged: nothing intact to rebuild from; the queue is served, with an ALARM naming it. */
    @Test
    void bothCopiesDamagedAreServedWithAnAlarm() throws Exception {
        writeBothCopiesAndDamageBoth();

        KvsQueue q = reopenAsRestartedOwner();
        String alarm = awaitEvent(e -> e.contains("ALARM") && e.contains("DAMAGED"), "alarm");
        assertThat(alarm).startsWith(Q + ": ");
        assertThat(q.read(0, 100, 1 << 20, 0).get(30, TimeUnit.SECONDS).isOk()).as("still served").isTrue();
    }

    /**
     * A read-only reader (no writer: nothing rebuilds the damaged copy) never reads the copy that
     * lost a DELETE while the intact one is there: it would hand out mail-03, deleted and
     * acknowledged. kvs1 is damaged: the first member, the copy chosen when both look alike.
     */
    @Test
    void aReadOnlyReaderReadsTheIntactCopyNotTheDamagedOne() throws Exception {
        List<String> live = writeTwoBatchesAndStop("kvs1");
        damageOlderFile("kvs1", false);
        servers.restart("kvs1");
        assertDamagedWithSameTransaction("kvs1", "kvs2");

        startOpener();
        KvsQueue reader = openReader();
        assertThat(ClusterRig.readAll(reader)).as("read through the read-only reader").containsExactlyElementsOf(live);
        assertThat(events).noneMatch(e -> e.contains("ALARM"));
        assertThat(stat("kvs1").damaged()).as("nothing rebuilt it: still damaged").isTrue();
    }

    /** Both copies damaged: the reader reads one all the same, with an ALARM naming it. */
    @Test
    void aReadOnlyReaderOfOnlyDamagedCopiesReadsWithAnAlarm() throws Exception {
        writeBothCopiesAndDamageBoth();

        startOpener();
        KvsQueue reader = openReader();
        assertThat(reader.read(0, 100, 1 << 20, 0).get(30, TimeUnit.SECONDS).isOk()).as("still served").isTrue();
        String alarm = awaitEvent(e -> e.contains("ALARM") && e.contains("DAMAGED copy"), "alarm");
        assertThat(alarm).startsWith(Q + ": ");
    }

    private KvsQueue openReader() throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
            r = opener.open(Q, OpenOptions.reader()).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100); // heartbeats still coming up
        }
        throw new AssertionError("reader open failed: " + r.status() + " " + r.reason() + "; events:\n  " + String.join("\n  ", events));
    }

    // ------------------------------------------------------------------ the scenario

    /**
     * Two batches through the real adapter, each put and delete acknowledged (both copies), with a
     * journal roll between them; then the writer goes away and {@code stopped} stops.
     *
     * @return the acknowledged live messages, in order
     */
    private List<String> writeTwoBatchesAndStop(String stopped) throws Exception {
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (String n : NODES) {
            servers.start(n, FreePorts.next()); // a port it keeps across restarts (bind(0) ports are ephemeral)
            specs.add(new ReplicationConfig.NodeSpec(n, "127.0.0.1", servers.port(n), "127.0.0.1", servers.port(n)));
        }
        // Lenient heartbeats: a copy lost to a slow machine while writing would refuse the writes.
        config = ReplicationConfig.of(specs, "james", PASSWORD)
                .withTimings(Duration.ofMillis(500), Duration.ofMillis(5000), Duration.ofMillis(5000));
        opener = ReplicatedQueueOpener.start(config);
        assertThat(opener.awaitConnected(NODES.size(), Duration.ofSeconds(30))).as("connected to both nodes").isTrue();
        KvsQueue q = openWhenConnected();
        awaitTwoSyncCopies();
        List<String> live = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            put(q, i, live);
        }
        delete(q, 3, live);
        servers.rollJournals(); // what follows goes to a new journal file on both nodes
        for (int i = 10; i < 20; i++) {
            put(q, i, live);
        }
        delete(q, 12, live);
        opener.close();
        opener = null;
        servers.stop(stopped);
        return live;
    }

    /**
     * Flips a bit in the older journal file of a stopped node: in the DELETE of mail-03 (its id; the
     * last record naming it in that file) and, with {@code putToo}, in the body of mail-05's PUT.
     */
    private void damageOlderFile(String node, boolean putToo) throws IOException {
        List<Path> files = JournalDamage.journalFiles(servers.dataDir(node));
        assertThat(files).as("journal files of %s", node).hasSizeGreaterThanOrEqualTo(2);
        Path older = files.get(0);
        JournalDamage.flip(older, JournalDamage.findLast(older, id(3)));
        if (putToo) {
            JournalDamage.flip(older, JournalDamage.find(older, body(5)) + 100);
        }
    }

    /** The precondition that makes the test mean something: only the flag tells the copies apart. */
    private void assertDamagedWithSameTransaction(String damaged, String intact) {
        QueueStat bad = stat(damaged);
        QueueStat good = stat(intact);
        assertThat(bad.damaged()).as("%s flagged DAMAGED", damaged).isTrue();
        assertThat(good.damaged()).as("%s intact", intact).isFalse();
        assertThat(bad.txn()).as("transaction numbers").isEqualTo(good.txn());
        assertThat(bad.digest()).as("the content check sees what the counts cannot").isNotEqualTo(good.digest());
    }

    private KvsQueue reopenAsRestartedOwner() throws InterruptedException {
        startOpener();
        return openWhenConnected();
    }

    /** Both copies lose a DELETE in their older journal file (both nodes down meanwhile), then both nodes restart. */
    private void writeBothCopiesAndDamageBoth() throws Exception {
        writeTwoBatchesAndStop("kvs2");
        servers.stop("kvs1");
        damageOlderFile("kvs1", false);
        damageOlderFile("kvs2", false);
        servers.restart("kvs1");
        servers.restart("kvs2");
    }

    /** A new adapter (a restarted James), its events recorded, once connected to both nodes. */
    private void startOpener() throws InterruptedException {
        opener = ReplicatedQueueOpener.start(config);
        opener.listen(events::add);
        assertThat(opener.awaitConnected(NODES.size(), Duration.ofSeconds(30))).as("connected to both nodes").isTrue();
    }

    private void assertBothCopiesHoldExactly(List<String> live) {
        for (String n : NODES) {
            assertThat(readAll(n)).as("messages on %s", n).containsExactlyElementsOf(live);
            assertThat(stat(n).damaged()).as("%s flagged DAMAGED after the rebuild", n).isFalse();
        }
    }

    // ------------------------------------------------------------------ helpers

    private KvsQueue openWhenConnected() throws InterruptedException {
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
            r = opener.open(Q, OpenOptions.writer("james-a", 1)).join();
            if (r.isOk()) {
                return r.queue();
            }
            Thread.sleep(100); // connections, heartbeats or a returning node still coming up
        }
        throw new AssertionError("open failed: " + r.status() + " " + r.reason() + "; events:\n  " + String.join("\n  ", events));
    }

    private void awaitTwoSyncCopies() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        ManagementTable t;
        while ((t = opener.managementTable()).rows().stream().filter(r -> r.sync() == SyncState.SYNC).count() < 2) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not two SYNC copies within 60 s:\n" + t.format());
            }
            Thread.sleep(50);
        }
    }

    private String awaitEvent(Predicate<String> what, String description) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            for (String e : events) {
                if (what.test(e)) {
                    return e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no event '" + description + "' within 60 s; events:\n  " + String.join("\n  ", events));
            }
            Thread.sleep(20);
        }
    }

    private static String id(int i) {
        return String.format("mail-%02d", i);
    }

    /** Holds no id: a marker that finds the PUT's body alone. */
    private static String body(int i) {
        return String.format("<BODY-%02d>", i);
    }

    private static void put(KvsQueue q, int i, List<String> live) throws Exception {
        Ack a = q.put(bytes(id(i)), 0, 0, null, bytes(body(i).repeat(40))).get(30, TimeUnit.SECONDS);
        assertThat(a.isOk()).as("put %s: %s %s", id(i), a.status(), a.reason()).isTrue();
        live.add(id(i));
    }

    private static void delete(KvsQueue q, int i, List<String> live) throws Exception {
        Ack a = q.delete(bytes(id(i))).get(30, TimeUnit.SECONDS);
        assertThat(a.isOk()).as("delete %s: %s %s", id(i), a.status(), a.reason()).isTrue();
        live.remove(id(i));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Requests of one opcode a node has served, from its metrics. */
    private long requests(String node, String op) {
        String needle = "kvs_requests_total{op=\"" + op + "\"} ";
        for (String line : servers.server(node).metrics().scrape().split("\n")) {
            if (line.startsWith(needle)) {
                return (long) Double.parseDouble(line.substring(needle.length()).trim());
            }
        }
        return 0;
    }

    /** STAT of one node's copy through a plain client (the real server's queue flags decoded). */
    private QueueStat stat(String node) {
        try (KvsClient c = servers.client(node)) {
            QueueStat st = c.open(Q, OpenOptions.reader()).join().orThrow().stat().join();
            assertThat(st.isOk()).as("STAT on %s", node).isTrue();
            return st;
        }
    }

    /** The user's messages on one node's copy, in position order, read directly. */
    private List<String> readAll(String node) {
        return ClusterRig.readCopy(servers.port(node), node, Q);
    }
}
