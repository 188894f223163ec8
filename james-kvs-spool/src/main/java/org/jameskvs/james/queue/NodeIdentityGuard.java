package org.jameskvs.james.queue;

import java.time.Duration;
import java.util.Optional;

import org.apache.james.queue.api.MailQueueFactory;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.Lease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses to start a James node under an identity ({@code ownerName}/{@code namespace}) that another
 * live process already writes under. Two such nodes would fence each other: opening the queues again
 * reclaims them with a higher epoch, and before this check nothing said so. The check looks at the
 * namespace's spool queue, which every James node opens at start, before this node opens anything.
 * <ul>
 * <li><b>Two copies</b> (replication): the queue's lease is looked at twice, two lease renewals
 *   ({@code replication.leaseRenewMillis}) apart. A lease renewed in between has a live writer:
 *   refused. One that did not move belongs to a node that is gone (this one, restarted) or has been
 *   paused for two renewals: its queues are reclaimed as before, and should that writer resume it
 *   finds itself fenced and stops ({@link org.jameskvs.james.Fencing}).</li>
 * <li><b>One server</b>: the queue is opened for writing at this node's epoch; QUEUE_LOCKED means
 *   another connection holds it at the same epoch, STALE_EPOCH that a newer epoch took it over:
 *   refused. (A node started with a higher epoch is the documented takeover and passes.)</li>
 * </ul>
 * A lease renewed by an adopter (owner {@code adopted-by:...}: another node delivering this node's
 * mail while it was away) is no refusal: the node takes its queues back at start (the hand-over).
 * Minimal on purpose: two nodes started at the same moment may both pass (neither shows a lease
 * yet); they then fence each other, which the fenced one reports and stops on. A check that cannot
 * reach the servers passes too: it cannot tell.
 */
public final class NodeIdentityGuard {
    private static final Logger LOGGER = LoggerFactory.getLogger(NodeIdentityGuard.class);

    private NodeIdentityGuard() {
    }

    /**
     * The KVS queue whose lease stands for a James node's: its spool at the normal priority, which
     * every node opens at start and keeps open (its writer's lease renewed) while it runs.
     */
    public static String leaseQueueOf(String namespace) {
        return namespace + "/queue/" + MailQueueFactory.SPOOL.asString() + PriorityLevels.LEVEL_SEPARATOR + MailPriority.NORMAL;
    }

    /** @throws IllegalStateException naming ownerName and namespace when another live process writes them */
    public static void check(KvsQueueOpener opener, KvsSpoolConfiguration configuration) {
        String spool = leaseQueueOf(configuration.namespace());
        if (opener instanceof ReplicatedKvsOpener replicated) {
            checkLease(replicated, spool, configuration);
        } else {
            checkWriteHandle(opener, spool, configuration);
        }
    }

    private static void checkLease(ReplicatedKvsOpener opener, String spool, KvsSpoolConfiguration configuration) {
        Optional<Lease> first = Futures.await(opener.peekLease(spool), configuration.requestTimeout(), "lease of " + spool);
        if (first.isEmpty()) {
            return;
        }
        Duration watch = opener.leaseRenew().multipliedBy(2);
        LOGGER.info("kvs-spool: {} has a writer's lease (owner {}); watching it for {} ms to tell a live writer from a gone one",
            spool, first.get().owner(), watch.toMillis());
        try {
            Thread.sleep(watch.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("kvs-spool: interrupted while checking the lease of " + spool, e);
        }
        Optional<Lease> second = Futures.await(opener.peekLease(spool), configuration.requestTimeout(), "lease of " + spool);
        if (second.isPresent() && second.get().renewedSince(first.get()) && isAdopter(second.get().owner())) {
            LOGGER.warn("kvs-spool: {} is held by {}, a node that adopted this node's namespace: taking it back", spool,
                second.get().owner());
            return; // the hand-over: org.jameskvs.james.cluster.NamespaceReclaim
        }
        if (second.isPresent() && second.get().renewedSince(first.get())) {
            throw refusal(configuration, spool, "its lease, held by owner '" + second.get().owner()
                + "', was renewed within " + watch.toMillis() + " ms");
        }
    }

    /** Owner names adopters write a lost node's queues under (org.jameskvs.james.cluster.NamespaceAdoption). */
    private static boolean isAdopter(String owner) {
        return owner.startsWith("adopted-by:");
    }

    private static void checkWriteHandle(KvsQueueOpener opener, String spool, KvsSpoolConfiguration configuration) {
        ListResult existing = Futures.await(opener.listQueues(), configuration.requestTimeout(), "list queues");
        if (!existing.isOk() || existing.queues().stream().noneMatch(queue -> queue.name().equals(spool))) {
            return; // nothing to hold yet (and not created here: James may keep its own spool)
        }
        OpenResult result = Futures.await(opener.open(spool, OpenOptions.writer(configuration.ownerName(), configuration.epoch())),
            configuration.requestTimeout(), "open " + spool);
        if (result.status() == Status.QUEUE_LOCKED || result.status() == Status.STALE_EPOCH) {
            throw refusal(configuration, spool, "it answered " + result.status() + " (" + result.reason() + ")");
        }
        if (result.isOk()) {
            result.queue().close(); // opened again by the queue that uses it
        }
    }

    private static IllegalStateException refusal(KvsSpoolConfiguration configuration, String spool, String evidence) {
        return new IllegalStateException("kvs-spool: refusing to start: another live process writes the KVS queues of"
            + " this James node (nodeId=" + configuration.nodeId() + ", ownerName=" + configuration.ownerName()
            + ", namespace=" + configuration.namespace()
            + ", epoch=" + configuration.epoch() + "): " + spool + " is held by another writer, " + evidence
            + ". Starting would fence that writer. Give each James node on one KVS cluster its own nodeId (by default"
            + " the host name: two James on one host need one each) or ownerName and namespace in kvs-spool.properties,"
            + " or stop the other process first.");
    }
}
