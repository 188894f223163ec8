package org.jameskvs.james.cluster;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
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
 * This node's adoption of another James node's namespace: it holds the lost node's mail queues (every
 * level of every James queue) and one-writer repositories (e.g. its error repository; not the OR-set
 * logs) as their writer, and moves their mail into its own queues, where its own mailet pipeline
 * delivers it, and into its own repositories of the same URL ({@link QueueMover}). The queues stay held (their leases renewed)
 * after they are drained, so no other node adopts them again, until {@link #release()} or until the
 * owner comes back and takes them over ({@link NamespaceReclaim}): this node's next call on them is
 * then refused (STALE_EPOCH) and the adoption ends, the hand-over.
 *
 * <p><b>One adopter.</b> The queues are taken over under the owner name {@link #ownerFor} (the
 * adoption marker and this node's owner name) with a higher epoch, spool first: the spool is the
 * claim. Two survivors that saw the lease expire at the same moment both take it over, the later
 * fencing the earlier; so before touching anything else each looks at the spool's lease again after
 * two renewals and goes on only if the record still names itself. The loser has then moved nothing.
 * Should a fence still come later, the fenced one stops at its first refused call and leaves the
 * rest to the holder (duplicates: at most the block it was moving).
 */
final class NamespaceAdoption {
    /** Prefix of the owner name an adopter writes a lost node's queues under. */
    static final String ADOPTER_MARK = "adopted-by:";
    /** Between a namespace and a repository's URL path in a KVS queue name. */
    static final String REPOSITORIES = "/repo/";
    private static final Logger LOGGER = LoggerFactory.getLogger(NamespaceAdoption.class);

    enum State { CLAIMING, MOVING, DRAINED, ENDED }

    private final String namespace;
    private final ReplicatedKvsOpener opener;
    private final KvsSpoolConfiguration configuration;
    private final KvsMailQueueFactory factory;
    private final KvsQueues ownQueues;
    private final Map<String, QueueMover> movers = new LinkedHashMap<>();
    private final Instant startedAt = Instant.now();
    private volatile State state = State.CLAIMING;
    private volatile String endReason = "";
    private volatile Instant drainedAt;

    NamespaceAdoption(String namespace, ReplicatedKvsOpener opener, KvsQueues ownQueues, KvsMailQueueFactory factory) {
        this.namespace = namespace;
        this.opener = opener;
        this.configuration = ownQueues.configuration();
        this.ownQueues = ownQueues;
        this.factory = factory;
    }

    static String ownerFor(KvsSpoolConfiguration configuration) {
        return ADOPTER_MARK + configuration.ownerName();
    }

    /** True for an owner name written by an adopter (not by the namespace's own node). */
    static boolean isAdopter(String owner) {
        return owner.startsWith(ADOPTER_MARK);
    }

    /**
     * Takes the spool over, waits two lease renewals and checks the claim still holds.
     *
     * @return false if another node holds the claim (this one then holds nothing)
     */
    boolean claim() throws InterruptedException {
        String spool = NodeIdentityGuard.leaseQueueOf(namespace);
        if (!takeOver(spool)) {
            return false;
        }
        Thread.sleep(opener.leaseRenew().multipliedBy(2).toMillis());
        Optional<Lease> lease = Futures.await(opener.peekLease(spool), configuration.requestTimeout(), "lease of " + spool);
        if (lease.isEmpty() || !lease.get().owner().equals(ownerFor(configuration))) {
            end("another node claimed it: lease " + lease.map(Lease::toString).orElse("unseen"));
            return false;
        }
        state = State.MOVING;
        LOGGER.warn("kvs-spool cluster: adopted namespace {} (claim holds); moving its mail into this node's queues", namespace);
        return true;
    }

    /**
     * Takes over the level queues of {@code names} not held yet (the namespace's, from a listing), then
     * moves one block from each. Called again and again by {@link ClusterWatch}'s loop.
     *
     * @return true if mail was moved (call again soon)
     */
    boolean step(List<String> names) {
        if (state == State.ENDED || state == State.CLAIMING) {
            return false;
        }
        for (String name : names) {
            if (!movers.containsKey(name) && !takeOver(name)) {
                return false;
            }
        }
        boolean movedSome = false;
        boolean allEmpty = true;
        for (QueueMover mover : movers.values()) {
            QueueMover.Outcome outcome = mover.moveBlock();
            switch (outcome) {
                case FENCED -> {
                    end("fenced on " + mover.sourceName() + " (" + mover.lastProblem() + "): its owner took it back,"
                        + " or another node adopted it");
                    return false;
                }
                case MOVED -> {
                    movedSome = true;
                    allEmpty = false;
                }
                case STORE_BUSY -> allEmpty = false;
                case EMPTY -> { }
            }
        }
        if (allEmpty && state == State.MOVING) {
            state = State.DRAINED;
            drainedAt = Instant.now();
            LOGGER.warn("kvs-spool cluster: adopted namespace {} drained: {} mail(s) moved into this node's queues",
                namespace, moved());
        } else if (!allEmpty && state == State.DRAINED) {
            state = State.MOVING;
        }
        return movedSome;
    }

    private boolean takeOver(String name) {
        Optional<LevelQueueName> level = LevelQueueName.parse(name);
        Optional<String> repository = repositoryPath(name);
        if (level.isEmpty() && repository.isEmpty()) {
            return true; // neither a mail queue level nor a one-writer repository: nothing to move
        }
        OpenResult result = Futures.await(opener.takeOver(name, OpenOptions.writer(ownerFor(configuration), configuration.epoch())),
            configuration.requestTimeout(), "take over " + name);
        if (!result.isOk()) {
            if (state == State.CLAIMING) {
                end("cannot take " + name + " over: " + result.status() + " " + result.reason());
            } else {
                LOGGER.warn("kvs-spool cluster: cannot take {} over yet ({} {}); retrying", name, result.status(), result.reason());
            }
            return false;
        }
        KvsMailQueueFactory.AdoptionTarget target = level.isPresent()
            ? factory.adoptionTarget(level.get().jamesQueue(), level.get().level())
            // The same repository of this node: it lists its queue on every call, so moved mail shows at once.
            : new KvsMailQueueFactory.AdoptionTarget(ownQueues.get(configuration.mailRepositoryPrefix() + repository.get()),
                delayed -> { });
        movers.put(name, new QueueMover(result.queue(), target, configuration.adoptionMoveBlock(),
            configuration.readBlockBytes(), configuration.requestTimeout()));
        return true;
    }

    /**
     * The URL path of a one-writer repository of this namespace ({@code <namespace>/repo/<path>}); empty
     * for anything else, OR-set logs included ({@code ...#<node>}: every node writes its own, and reads
     * the others', lost or not).
     */
    private Optional<String> repositoryPath(String name) {
        String prefix = namespace + REPOSITORIES;
        return name.startsWith(prefix) && !name.contains("#") && name.length() > prefix.length()
            ? Optional.of(name.substring(prefix.length())) : Optional.empty();
    }

    /** Gives the queues up (their leases then expire; the owner, or a peer, takes them). */
    void release() {
        end("released by hand");
    }

    void end(String reason) {
        if (state == State.ENDED) {
            return;
        }
        state = State.ENDED;
        endReason = reason;
        movers.values().forEach(QueueMover::close);
        LOGGER.warn("kvs-spool cluster: adoption of namespace {} ended: {} ({} mail(s) moved)", namespace, reason, moved());
    }

    String namespace() {
        return namespace;
    }

    State state() {
        return state;
    }

    boolean ended() {
        return state == State.ENDED;
    }

    long moved() {
        return movers.values().stream().mapToLong(QueueMover::moved).sum();
    }

    /** What an admin sees of this adoption. */
    AdoptionView view() {
        return new AdoptionView(namespace, state.name(), startedAt, Optional.ofNullable(drainedAt), moved(),
            List.copyOf(movers.keySet()), endReason);
    }
}
