package org.jameskvs.james;

import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.replication.Lease;
import org.jameskvs.replication.ManagementTable;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;

import javax.annotation.PreDestroy;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Queues kept on two KVS nodes (the {@code replication.*} settings): an enqueue is acknowledged only
 * once both copies hold the mail. All of replication lives behind {@link ReplicatedQueueOpener}; this
 * class only adapts it to the plug-in's {@link KvsQueueOpener}.
 */
public final class ReplicatedKvsOpener implements KvsQueueOpener, AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ReplicatedKvsOpener.class);
    private final ReplicatedQueueOpener opener;
    private final Duration leaseRenew;
    private final Duration leaseTimeout;

    private ReplicatedKvsOpener(ReplicatedQueueOpener opener, Duration leaseRenew, Duration leaseTimeout) {
        this.opener = opener;
        this.leaseRenew = leaseRenew;
        this.leaseTimeout = leaseTimeout;
    }

    /**
     * Connects to the group and waits (up to {@code requestTimeout}) for every node: creating a new
     * queue needs an answer from each (so two nodes can never both think they hold the only copies),
     * as the single-server opener waits for its server. With fewer nodes James still starts:
     * existing queues work with two copies; enqueues fail (SMTP 4xx) while two copies can't be written.
     */
    public static ReplicatedKvsOpener start(KvsSpoolConfiguration configuration) {
        ReplicationConfig config = ReplicationConfig.fromProperties(configuration.properties());
        ReplicatedQueueOpener opener = ReplicatedQueueOpener.start(config, configuration.tls());
        try {
            if (!opener.awaitConnected(config.nodes().size(), configuration.requestTimeout())) {
                LOG.warn("kvs-spool: not every KVS node of {} reachable after {}; new queues can't be created and "
                    + "enqueues fail until two copies can be written", config.nodes(), configuration.requestTimeout());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new ReplicatedKvsOpener(opener, config.leaseRenew(), config.leaseTimeout());
    }

    @Override
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        return opener.open(name, options);
    }

    @Override
    public CompletableFuture<ListResult> listQueues() {
        return opener.listQueues();
    }

    /** The writer's lease on a queue as the nodes show it now (fences nothing): see {@link Lease}. */
    public CompletableFuture<Optional<Lease>> peekLease(String name) {
        return opener.peekLease(name);
    }

    /** How often a live writer renews its lease ({@code replication.leaseRenewMillis}). */
    public Duration leaseRenew() {
        return leaseRenew;
    }

    /** How long a lease may go unrenewed before a peer may take its queues ({@code replication.leaseTimeoutMillis}). */
    public Duration leaseTimeout() {
        return leaseTimeout;
    }

    /**
     * Admin: opens the queue for writing whoever holds it now; its epoch, above the holder's, fences
     * the holder (which then stops: see {@link Fencing}).
     */
    public CompletableFuture<OpenResult> takeOver(String name, OpenOptions options) {
        return opener.takeOver(name, options);
    }

    /**
     * The paper's management table (network state A/S, sync state, transaction number per queue and
     * node), and how many calls the replication's backstop had to answer (each one a bug, logged).
     */
    public String managementTable() {
        return opener.managementTable().format() + "call backstop outcomes: " + opener.backstopOutcomes() + "\n";
    }

    /** Admin: one queue's management table, read from the nodes without fencing (kvs-admin table). */
    public CompletableFuture<ManagementTable> peekTable(String name) {
        return opener.peekTable(name);
    }

    @PreDestroy
    @Override
    public void close() {
        opener.close();
    }
}
