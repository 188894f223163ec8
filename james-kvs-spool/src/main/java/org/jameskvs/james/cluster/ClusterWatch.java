package org.jameskvs.james.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.jameskvs.client.QueueInfo;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.queue.KvsMailQueueFactory;
import org.jameskvs.james.queue.NodeIdentityGuard;
import org.jameskvs.replication.Lease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This James node's part in the cluster: it looks at the other nodes' leases and adopts the
 * namespace of a node whose lease expired ({@link NamespaceAdoption}), then keeps moving that
 * namespace's mail into its own queues. Every James node's lease is the writer's lease of its spool
 * queue (kvs-replication renews it every {@code replication.leaseRenewMillis} while the queue is
 * open, i.e. while the node runs); the peers are the namespaces that have a spool queue in the KVS.
 *
 * <p>One thread does everything (looks, claims, moves), every {@code adoption.checkIntervalMillis},
 * sooner while mail is moving. Nothing here decides safety: a takeover fences the previous writer
 * with a higher epoch; the lease only says when to try.
 */
public final class ClusterWatch implements AutoCloseable {
    private static final Logger LOGGER = LoggerFactory.getLogger(ClusterWatch.class);

    private final ReplicatedKvsOpener opener;
    private final KvsSpoolConfiguration configuration;
    private final KvsMailQueueFactory factory;
    private final KvsQueues ownQueues;
    private final Duration leaseTimeout;
    private final Map<String, PeerLease> peers = new ConcurrentHashMap<>();
    private final Map<String, NamespaceAdoption> adoptions = new ConcurrentHashMap<>();
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvs-cluster-watch");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean stopped;

    /** @param opener null with one KVS server (no leases): the watch then never starts */
    public ClusterWatch(ReplicatedKvsOpener opener, KvsQueues ownQueues, KvsMailQueueFactory factory) {
        this.opener = opener;
        this.configuration = ownQueues.configuration();
        this.ownQueues = ownQueues;
        this.factory = factory;
        this.leaseTimeout = opener == null ? Duration.ZERO : opener.leaseTimeout();
    }

    /**
     * Starts the loop (replicated only): it looks at the peers' leases and adopts if
     * {@code adoption.enabled}, and moves the mail of every namespace adopted (automatically or by hand).
     */
    public ClusterWatch start() {
        if (opener != null) {
            LOGGER.info("kvs-spool cluster: node {} (namespace {}) {} (lease timeout {} ms)", configuration.nodeId(),
                configuration.namespace(), configuration.adoptionEnabled() ? "watching the other James nodes' leases"
                    : "adopting only when asked (adoption.enabled=false)", leaseTimeout.toMillis());
            thread.schedule(this::round, configuration.adoptionCheckInterval().toMillis(), TimeUnit.MILLISECONDS);
        }
        return this;
    }

    private void round() {
        if (stopped) {
            return;
        }
        boolean busy = false;
        try {
            busy = lookAndAdopt();
        } catch (RuntimeException e) {
            LOGGER.warn("kvs-spool cluster: lease round failed, trying again", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (!stopped) {
            thread.schedule(this::round, busy ? 0 : configuration.adoptionCheckInterval().toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** One round: @return true if mail moved (go again at once). */
    private boolean lookAndAdopt() throws InterruptedException {
        if (ownQueues.fencing().isFenced()) {
            // A fenced node has stopped (another writer holds its own queues): it adopts nothing, and gives
            // up what it adopted, whose mail it could no longer deliver (its own queues refuse it).
            adoptions.values().forEach(a -> a.end("this node is fenced"));
            return false;
        }
        List<String> names = Futures.await(opener.listQueues(), configuration.requestTimeout(), "list queues").orThrow()
            .stream().map(QueueInfo::name).toList();
        long now = System.nanoTime();
        for (String namespace : configuration.adoptionEnabled() ? peerNamespaces(names) : List.<String>of()) {
            if (adoptions.containsKey(namespace) && !adoptions.get(namespace).ended()) {
                continue;
            }
            Optional<Lease> lease = Futures.await(opener.peekLease(NodeIdentityGuard.leaseQueueOf(namespace)),
                configuration.requestTimeout(), "lease of " + namespace);
            boolean expired = peers.computeIfAbsent(namespace, n -> new PeerLease(leaseTimeout)).observe(lease, now);
            if (expired && !stopped) {
                adopt(namespace, "lease of " + lease.map(Lease::owner).orElse("?") + " not renewed for "
                    + peers.get(namespace).unrenewedFor(System.nanoTime()).toMillis() + " ms");
            }
        }
        boolean moved = false;
        for (NamespaceAdoption adoption : adoptions.values()) {
            if (!adoption.ended() && !stopped) {
                String queues = adoption.namespace() + LevelQueueName.QUEUES;
                String repositories = adoption.namespace() + NamespaceAdoption.REPOSITORIES;
                moved |= adoption.step(names.stream().filter(n -> n.startsWith(queues) || n.startsWith(repositories))
                    .sorted().toList());
                if (adoption.ended()) {
                    peers.remove(adoption.namespace()); // its next holder's lease is watched afresh, a full timeout
                }
            }
        }
        return moved;
    }

    /** Namespaces of the other James nodes: those with a spool queue, this node's excluded. */
    private List<String> peerNamespaces(List<String> names) {
        return names.stream()
            .map(LevelQueueName::parse).flatMap(Optional::stream)
            .map(LevelQueueName::namespace)
            .filter(namespace -> !namespace.equals(configuration.namespace()))
            .filter(namespace -> names.contains(NodeIdentityGuard.leaseQueueOf(namespace)))
            .distinct().sorted().collect(Collectors.toList());
    }

    private void adopt(String namespace, String why) throws InterruptedException {
        LOGGER.warn("kvs-spool cluster: adopting namespace {}: {}", namespace, why);
        NamespaceAdoption adoption = new NamespaceAdoption(namespace, opener, ownQueues, factory);
        adoptions.put(namespace, adoption);
        if (!adoption.claim()) {
            peers.remove(namespace); // watch its new holder's lease afresh
        }
    }

    /**
     * Admin: adopts {@code namespace} now, whatever its lease says (its writer, if alive, is fenced
     * and stops). Runs on the watch's thread; @return the adoption as it stands after the claim.
     */
    public AdoptionView adoptNow(String namespace) throws Exception {
        checkAdoptable(namespace);
        return thread.submit(() -> {
            NamespaceAdoption current = adoptions.get(namespace);
            if (current == null || current.ended()) {
                adopt(namespace, "asked by an administrator");
            }
            return adoptions.get(namespace).view();
        }).get();
    }

    /** Admin: throws when {@link #adoptNow} must refuse {@code namespace} (checked before a task is started). */
    public void checkAdoptable(String namespace) {
        if (opener == null) {
            throw new IllegalStateException("adoption needs replication.nodes (leases and epochs live there)");
        }
        if (namespace.equals(configuration.namespace())) {
            throw new IllegalArgumentException("namespace " + namespace + " is this node's own");
        }
    }

    /** Admin: gives an adopted namespace up. @return false if it was not adopted here. */
    public boolean release(String namespace) throws Exception {
        return thread.submit(() -> {
            NamespaceAdoption adoption = adoptions.get(namespace);
            if (adoption == null || adoption.ended()) {
                return false;
            }
            adoption.release();
            peers.remove(namespace);
            return true;
        }).get();
    }

    /** The other James nodes seen, with their lease as last looked at. */
    public List<PeerView> peers() {
        long now = System.nanoTime();
        Map<String, PeerView> views = new TreeMap<>();
        peers.forEach((namespace, lease) -> views.put(namespace, new PeerView(namespace,
            lease.last().map(Lease::owner).orElse(""), lease.last().map(Lease::epoch).orElse(0L),
            lease.last().map(Lease::seq).orElse(0L), lease.unrenewedFor(now).toMillis(),
            lease.unrenewedFor(now).compareTo(leaseTimeout) >= 0,
            Optional.ofNullable(adoptions.get(namespace)).filter(a -> !a.ended()).isPresent())));
        return new ArrayList<>(views.values());
    }

    /** Every adoption this node made since it started, the ended ones included. */
    public List<AdoptionView> adoptions() {
        return adoptions.values().stream().map(NamespaceAdoption::view)
            .sorted((a, b) -> a.namespace().compareTo(b.namespace())).toList();
    }

    public KvsSpoolConfiguration configuration() {
        return configuration;
    }

    /** Whether this node is fenced on its own queues (reported with the cluster view). */
    public boolean fenced() {
        return ownQueues.fencing().isFenced();
    }

    public Duration leaseTimeout() {
        return leaseTimeout;
    }

    @javax.annotation.PreDestroy
    @Override
    public void close() {
        stopped = true;
        thread.shutdown();
        try {
            thread.awaitTermination(configuration.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        adoptions.values().forEach(a -> a.end("this node is stopping"));
    }
}
