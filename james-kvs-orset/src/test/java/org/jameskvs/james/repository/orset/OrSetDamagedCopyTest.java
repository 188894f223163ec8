package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.james.mailrepository.api.MailKey;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.repository.orset.OrSetCopyNodes.Node;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.server.storage.JournalDamage;
import org.jameskvs.server.storage.RollingJournalServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OR-set log readers and a DAMAGED copy, on real servers (two in-process KVS nodes whose
 * journals roll when the test's clock advances, the replication layer, OR-set repositories). Node
 * A stores mails, removes one and collects it (its log's ADD and REMOVE are deleted); then A goes
 * away (nothing rebuilds its log's copies) and kvs0's copy of A's log loses the DELETE of that ADD
 * (a bit flipped in an older journal file: its server flags the copy DAMAGED). A node started then
 * must read A's log on the intact copy only: read as the union of both in-sync copies, the damaged
 * one brings the removed mail back.
 */
class OrSetDamagedCopyTest {
    private static final String PASSWORD = "orset-damaged-secret";

    @TempDir
    Path dir;

    private RollingJournalServers servers;
    private final OrSetCopyNodes nodes = new OrSetCopyNodes("damaged", PASSWORD);

    @BeforeEach
    void setUp() {
        servers = new RollingJournalServers(dir, PASSWORD);
    }

    @AfterEach
    void tearDown() {
        nodes.close();
        servers.close();
    }

    @Test
    void aNodeStartedLaterReadsTheIntactCopyNotTheDamagedOne() throws Exception {
        servers.start("kvs0", 0);
        servers.start("kvs1", 0);
        Node a = node("A");
        for (int i = 0; i < 6; i++) {
            a.repository().store(OrSetMailRepositoryConvergenceTest.mail("mail-" + i, "body " + i));
        }
        String logA = nodes.logOf("A");
        String addOfMail3 = idOfOp(logA, "mail-3");
        a.repository().remove(new MailKey("mail-3"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // Collected: mail-3's ADD first (G1), then its REMOVE (G3): the own log holds the 5 live ADDs.
        while (System.nanoTime() < deadline && a.repository().ownRecords() > 5) {
            a.repository().collectGarbageNow();
            Thread.sleep(50);
        }
        assertThat(a.repository().ownRecords()).as("records left in A's own log").isEqualTo(5);
        assertThat(idsOn("kvs0", logA)).doesNotContain(addOfMail3);
        servers.rollJournals(); // what follows goes to a new journal file
        a.repository().store(OrSetMailRepositoryConvergenceTest.mail("mail-6", "body 6"));
        a.close(); // nothing rebuilds the copies from now on

        servers.stop("kvs0");
        List<Path> files = JournalDamage.journalFiles(servers.dataDir("kvs0"));
        assertThat(files).hasSizeGreaterThanOrEqualTo(2);
        JournalDamage.flip(files.get(0), JournalDamage.findLast(files.get(0), addOfMail3));
        servers.restart("kvs0");
        assertThat(stat("kvs0", logA).damaged()).as("the precondition: kvs0's copy flagged DAMAGED").isTrue();
        assertThat(idsOn("kvs0", logA)).as("the precondition: the damaged copy holds the collected ADD").contains(addOfMail3);
        assertThat(stat("kvs1", logA).damaged()).isFalse();

        Node c = node("C");
        c.repository().sync();
        List<String> keys = new ArrayList<>();
        c.repository().list().forEachRemaining(k -> keys.add(k.asString()));
        assertThat(keys).as("A's mail seen from C").containsExactlyInAnyOrder("mail-0", "mail-1", "mail-2", "mail-4",
            "mail-5", "mail-6");
    }

    private Node node(String id) {
        return nodes.start(id, servers.ports(), new Properties());
    }

    private QueueStat stat(String node, String queue) {
        try (KvsClient c = servers.client(node)) {
            return c.open(queue, OpenOptions.reader()).join().orThrow().stat().join();
        }
    }

    private List<StoredMessage> messagesOn(String node, String queue) {
        try (KvsClient c = servers.client(node)) {
            KvsQueue q = c.open(queue, OpenOptions.reader()).join().orThrow();
            ReadResult rr = q.read(0, 10_000, 16 << 20, 0).join();
            assertThat(rr.isOk()).isTrue();
            return rr.messages();
        }
    }

    private List<String> idsOn(String node, String queue) {
        return messagesOn(node, queue).stream().map(m -> new String(m.id(), StandardCharsets.UTF_8)).toList();
    }

    /** The id of the operation in {@code log} whose body names the mail (its ADD). */
    private String idOfOp(String log, String mailName) {
        for (StoredMessage m : messagesOn("kvs0", log)) {
            if (new String(m.body(), StandardCharsets.ISO_8859_1).contains(mailName)) {
                return new String(m.id(), StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError("no operation naming " + mailName + " in " + log);
    }
}
