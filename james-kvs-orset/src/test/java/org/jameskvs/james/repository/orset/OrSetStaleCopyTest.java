package org.jameskvs.james.repository.orset;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.james.mailrepository.api.MailKey;
import org.jameskvs.james.repository.orset.OrSetCopyNodes.Node;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10, defect 3, on real servers (three in-process KVS nodes, the replication layer, three OR-set
 * repositories): a member of node A's log goes away, its copy is isolated and rebuilt on the third
 * node, and the node comes back with its stale copy (20 ADDs). A then removes the 20 mails and
 * collects them. Read as "every node that has the queue", the stale copy brought the 20 removed
 * mails back on a node started later (while A sees none: permanent divergence) and kept B's 20
 * tombstones alive forever (the ADDs never looked gone). Readers and garbage collection must use
 * only the copies the log's newest replication record names in sync.
 */
class OrSetStaleCopyTest {
    private static final String PASSWORD = "orset-stale-secret";
    private static final int MAILS = 20;

    @TempDir
    Path dir;

    private final List<KvsServer> servers = new ArrayList<>();
    private final int[] ports = new int[3];
    private final OrSetCopyNodes nodes = new OrSetCopyNodes("stale", PASSWORD);

    @AfterEach
    void tearDown() {
        nodes.close();
        servers.forEach(s -> {
            try {
                s.close();
            } catch (RuntimeException ignored) {
                // stopped by the test
            }
        });
    }

    @Test
    void aStaleCopyOnAFormerMemberNeitherResurrectsRemovedMailNorKeepsTombstones() throws Exception {
        for (int i = 0; i < 3; i++) {
            ports[i] = freePort();
            servers.add(startServer(i));
        }
        Node a = node("A");
        Node b = node("B");
        for (int i = 0; i < MAILS; i++) {
            a.repository().store(OrSetMailRepositoryConvergenceTest.mail("mail-" + i, "body " + i));
        }
        b.repository().sync();
        assertThat(b.repository().size()).isEqualTo(MAILS);

        // kvs1, a member of every log (FIRST_TWO: kvs0 and kvs1), stops: A's log is rebuilt on kvs2.
        servers.get(1).close();
        String logA = nodes.logOf("A");
        awaitInSyncOn(a, logA, "kvs0", "kvs2");
        // kvs1 comes back with its journal: a stale copy of A's log, 20 ADDs.
        servers.set(1, startServer(1));

        for (int i = 0; i < MAILS; i++) {
            a.repository().remove(new MailKey("mail-" + i));
        }
        assertThat(a.repository().size()).isZero();
        // Garbage collection on both nodes (bounded): A's ADDs and REMOVEs leave A's log, B's
        // tombstones of them go once the ADDs are gone from the copies B reads.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && (a.repository().ownRecords() > 0 || b.repository().tombstones() > 0)) {
            a.repository().collectGarbageNow();
            b.repository().collectGarbageNow();
            Thread.sleep(50);
        }
        assertThat(a.repository().ownRecords()).as("records left in A's own log").isZero();
        assertThat(b.repository().tombstones()).as("B's tombstones of A's removed mail (GC liveness)").isZero();
        assertThat(b.repository().size()).isZero();

        // A node started now reads A's log: it must see what A sees.
        Node c = node("C");
        c.repository().sync();
        assertThat(c.repository().size()).as("mail on a node started after the removal (resurrection)").isZero();
        assertThat(a.repository().size()).isZero();
    }

    private Node node(String id) {
        Map<String, Integer> members = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            members.put("kvs" + i, ports[i]);
        }
        Properties placement = new Properties();
        placement.setProperty("replication.placement.rule", "FIRST_TWO");
        return nodes.start(id, members, placement);
    }

    /** Waits (bounded) until the writer's management table shows the log SYNC on exactly these nodes. */
    private static void awaitInSyncOn(Node writer, String log, String... nodes) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String table = "";
        while (System.nanoTime() < deadline) {
            // Writes make the writer notice the lost node at once (heartbeats would too, later).
            try {
                writer.repository().sync();
            } catch (RuntimeException ignored) {
                // a read may fail while the copies move
            }
            table = writer.opener().managementTable();
            List<String> sync = new ArrayList<>();
            for (String line : table.split("\n")) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 4 && f[0].equals(log) && f[4].equals("SYNC")) {
                    sync.add(f[1]);
                }
            }
            if (sync.size() == nodes.length && sync.containsAll(List.of(nodes)) && !table.contains("rebuilding")) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(log + " not in sync on " + List.of(nodes) + " in time:\n" + table);
    }

    private KvsServer startServer(int i) {
        Properties p = ServerConfig.testProperties(dir.resolve("kvs" + i), PASSWORD);
        p.setProperty("listen.port", String.valueOf(ports[i]));
        return KvsServer.start(ServerConfig.fromProperties(p));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }
}
