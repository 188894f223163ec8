package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepositoryPath;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.jameskvs.server.storage.JournalDamage;
import org.jameskvs.server.storage.JournalTuning;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

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
    private static final MailRepositoryUrl URL = MailRepositoryUrl.fromPathAndProtocol(MailRepositoryPath.from("var/mail/error"), "kvs");

    @TempDir
    Path dir;

    private final SetTimeProvider journalClock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));
    private final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        servers.values().forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // stopped by the test
            }
        });
    }

    @Test
    void aNodeStartedLaterReadsTheIntactCopyNotTheDamagedOne() throws Exception {
        start("kvs0", 0);
        start("kvs1", 0);
        Node a = node("A");
        for (int i = 0; i < 6; i++) {
            a.repository.store(OrSetMailRepositoryConvergenceTest.mail("mail-" + i, "body " + i));
        }
        String logA = "damaged/repo/" + URL.getPath().asString() + OrSetMailRepository.NODE_SEPARATOR + "A";
        String addOfMail3 = idOfOp(logA, "mail-3");
        a.repository.remove(new MailKey("mail-3"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // Collected: mail-3's ADD first (G1), then its REMOVE (G3): the own log holds the 5 live ADDs.
        while (System.nanoTime() < deadline && a.repository.ownRecords() > 5) {
            a.repository.collectGarbageNow();
            Thread.sleep(50);
        }
        assertThat(a.repository.ownRecords()).as("records left in A's own log").isEqualTo(5);
        assertThat(idsOn("kvs0", logA)).doesNotContain(addOfMail3);
        journalClock.advanceMillis(2000); // what follows goes to a new journal file
        a.repository.store(OrSetMailRepositoryConvergenceTest.mail("mail-6", "body 6"));
        a.close(); // nothing rebuilds the copies from now on

        servers.remove("kvs0").close();
        List<Path> files = JournalDamage.journalFiles(dir.resolve("kvs0"));
        assertThat(files).hasSizeGreaterThanOrEqualTo(2);
        JournalDamage.flip(files.get(0), JournalDamage.findLast(files.get(0), addOfMail3));
        journalClock.advanceMillis(2000);
        start("kvs0", ports.get("kvs0"));
        assertThat(stat("kvs0", logA).damaged()).as("the precondition: kvs0's copy flagged DAMAGED").isTrue();
        assertThat(idsOn("kvs0", logA)).as("the precondition: the damaged copy holds the collected ADD").contains(addOfMail3);
        assertThat(stat("kvs1", logA).damaged()).isFalse();

        Node c = node("C");
        c.repository.sync();
        List<String> keys = new ArrayList<>();
        c.repository.list().forEachRemaining(k -> keys.add(k.asString()));
        assertThat(keys).as("A's mail seen from C").containsExactlyInAnyOrder("mail-0", "mail-1", "mail-2", "mail-4",
            "mail-5", "mail-6");
    }

    private record Node(OrSetMailRepository repository, ReplicatedKvsOpener opener) implements AutoCloseable {
        @Override
        public void close() {
            repository.close();
            opener.close();
        }
    }

    private Node node(String id) {
        Properties p = new Properties();
        p.setProperty("servers", "127.0.0.1:" + ports.get("kvs0"));
        p.setProperty("replication.nodes", "kvs0,kvs1");
        ports.forEach((n, port) -> p.setProperty("replication.node." + n + ".active", "127.0.0.1:" + port));
        p.setProperty("user", "james");
        p.setProperty("password", PASSWORD);
        p.setProperty("namespace", "damaged");
        p.setProperty("ownerName", id);
        p.setProperty("requestTimeout", "10000");
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(p);
        ReplicatedKvsOpener opener = ReplicatedKvsOpener.start(configuration);
        KvsQueues queues = new KvsQueues(opener, configuration);
        OrSetMailRepository repository = new OrSetMailRepository(queues, opener, URL, id,
            new OrSetMailRepository.Options(true, Duration.ofMillis(100), Duration.ofMinutes(5)), System::currentTimeMillis);
        closeables.add(opener);
        closeables.add(queues);
        closeables.add(repository);
        return new Node(repository, opener);
    }

    private void start(String node, int port) {
        ServerConfig c = ServerConfig.forTest(dir.resolve(node), PASSWORD).withListenPort(port);
        KvsServer s = KvsServer.start(c, c.storeConfig().withTuning(JournalTuning.defaults()
            .withRollCycle(TestRollCycles.TEST_SECONDLY, journalClock)));
        servers.put(node, s);
        ports.put(node, s.port());
    }

    private KvsClient plainClient(String node) {
        return KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(ports.get(node))
            .credentials("james", PASSWORD).build());
    }

    private QueueStat stat(String node, String queue) {
        try (KvsClient c = plainClient(node)) {
            return c.open(queue, OpenOptions.reader()).join().orThrow().stat().join();
        }
    }

    private List<StoredMessage> messagesOn(String node, String queue) {
        try (KvsClient c = plainClient(node)) {
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
