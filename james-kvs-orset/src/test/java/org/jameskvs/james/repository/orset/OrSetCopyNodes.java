package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.james.mailrepository.api.MailRepositoryPath;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/**
 * James nodes for the tests of the OR-set's log copies (stale, damaged): each an OR-set repository
 * ({@code var/mail/error}, garbage collection on) through the real replication adapter
 * ({@link ReplicatedKvsOpener}) to the test's in-process KVS servers. {@link #close()} closes what
 * the nodes opened, newest first, best effort (a test may have closed a node already).
 */
final class OrSetCopyNodes implements AutoCloseable {
    static final MailRepositoryUrl URL = MailRepositoryUrl.fromPathAndProtocol(MailRepositoryPath.from("var/mail/error"), "kvs");

    /** One James node: its repository and its connection (whose management table shows the copies). */
    record Node(OrSetMailRepository repository, ReplicatedKvsOpener opener) implements AutoCloseable {
        @Override
        public void close() {
            repository.close();
            opener.close();
        }
    }

    private final String namespace;
    private final String password;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    OrSetCopyNodes(String namespace, String password) {
        this.namespace = namespace;
        this.password = password;
    }

    /**
     * Starts node {@code id} on the KVS nodes {@code ports} (name to port, in member order; the
     * first is the seed), with {@code extra} configuration (a placement rule, say) on top.
     */
    Node start(String id, Map<String, Integer> ports, Properties extra) {
        Properties p = new Properties();
        p.setProperty("servers", "127.0.0.1:" + ports.values().iterator().next());
        p.setProperty("replication.nodes", String.join(",", ports.keySet()));
        ports.forEach((n, port) -> p.setProperty("replication.node." + n + ".active", "127.0.0.1:" + port));
        p.putAll(extra);
        setIdentity(p, password, namespace, id);
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

    /** A James node's identity in its plug-in configuration: user james and {@code password}, its namespace and owner name; 10 s request timeout. */
    static void setIdentity(Properties p, String password, String namespace, String id) {
        p.setProperty("user", "james");
        p.setProperty("password", password);
        p.setProperty("namespace", namespace);
        p.setProperty("ownerName", id);
        p.setProperty("requestTimeout", "10000");
    }

    /** The KVS queue of node {@code id}'s own log. */
    String logOf(String id) {
        return namespace + "/repo/" + URL.getPath().asString() + OrSetMailRepository.NODE_SEPARATOR + id;
    }

    @Override
    public void close() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
    }
}
