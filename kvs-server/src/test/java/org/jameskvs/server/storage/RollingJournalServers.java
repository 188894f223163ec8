package org.jameskvs.server.storage;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

/**
 * Real in-process KVS servers, by node name, whose journals roll each second of one clock the test
 * advances: {@link #rollJournals()} puts what follows in a new journal file on every node, so a
 * test can damage an older file ({@link JournalDamage}) whose replay goes on past it. For the tests
 * of DAMAGED copies (kvs-replication's, the OR-set's, through the test-jar). Each node's data is
 * in {@code dir/<node>}; {@link #close()} closes the servers still running.
 */
public final class RollingJournalServers implements AutoCloseable {
    private final Path dir;
    private final String password;
    private final SetTimeProvider journalClock = new SetTimeProvider(Instant.parse("2030-01-01T00:00:00Z"));
    private final Map<String, KvsServer> servers = new LinkedHashMap<>();
    private final Map<String, Integer> ports = new LinkedHashMap<>();

    public RollingJournalServers(Path dir, String password) {
        this.dir = dir;
        this.password = password;
    }

    /** Starts {@code node} on {@code port} (0: any free port, kept for restarts). */
    public void start(String node, int port) {
        ServerConfig c = ServerConfig.forTest(dir.resolve(node), password).withListenPort(port);
        KvsServer s = KvsServer.start(c, c.storeConfig().withTuning(JournalTuning.defaults()
                .withRollCycle(TestRollCycles.TEST_SECONDLY, journalClock)));
        servers.put(node, s);
        ports.put(node, s.port());
    }

    /** Stops {@code node} (its journal stays in its folder, for damage and a restart). */
    public void stop(String node) {
        servers.remove(node).close();
    }

    /** Starts a stopped node again on its former port (clients' configurations name it), in a new journal file. */
    public void restart(String node) {
        rollJournals();
        start(node, port(node));
    }

    /** Advances the journals' clock by two seconds: what follows goes to a new journal file on every node. */
    public void rollJournals() {
        journalClock.advanceMillis(2000);
    }

    public KvsServer server(String node) {
        return servers.get(node);
    }

    public int port(String node) {
        return ports.get(node);
    }

    /** Every node started so far and its port, in start order. */
    public Map<String, Integer> ports() {
        return Collections.unmodifiableMap(ports);
    }

    /** The node's data folder (its journal files: {@link JournalDamage#journalFiles}). */
    public Path dataDir(String node) {
        return dir.resolve(node);
    }

    /** A plain client (no replication) of one node, as user "james". */
    public KvsClient client(String node) {
        return KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(port(node))
                .credentials("james", password).build());
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (KvsServer s : servers.values()) {
            try {
                s.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        servers.clear();
        if (first != null) {
            throw first;
        }
    }
}
