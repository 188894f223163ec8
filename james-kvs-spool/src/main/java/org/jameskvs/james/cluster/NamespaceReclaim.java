package org.jameskvs.james.cluster;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Optional;

import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueInfo;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.replication.Lease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hand-over when a James node comes back: before it opens anything, it takes back every queue and
 * repository of its namespace that an adopter holds (owner {@code adopted-by:...}, see {@link NamespaceAdoption}),
 * with a higher epoch. The adopter's next call on such a queue is refused (STALE_EPOCH) and its
 * adoption ends; the mail it already moved stays in its own queues and is delivered there, the rest is
 * this node's again. A queue held by its own owner name is left to the normal open (a reclaim),
 * guarded by {@code NodeIdentityGuard}.
 */
public final class NamespaceReclaim {
    private static final Logger LOGGER = LoggerFactory.getLogger(NamespaceReclaim.class);
    private static final int ATTEMPTS = 5;

    private NamespaceReclaim() {
    }

    /**
     * @return the queues taken back, by name, with their open write handles: hand them to
     *   {@code KvsQueues#useOpened} (closing one and opening it again would leave its lease unrenewed
     *   while James starts, long enough for the adopter to adopt it again)
     * @throws IllegalStateException when a queue held by an adopter cannot be taken back
     */
    public static Map<String, OpenResult> takeBack(KvsQueueOpener opener, KvsSpoolConfiguration configuration)
        throws InterruptedException {
        if (!(opener instanceof ReplicatedKvsOpener replicated)) {
            return Map.of(); // one server: no leases, no adoption
        }
        String queues = configuration.mailQueuePrefix();
        String repositories = configuration.mailRepositoryPrefix();
        List<String> own = Futures.await(opener.listQueues(), configuration.requestTimeout(), "list queues").orThrow()
            .stream().map(QueueInfo::name).filter(name -> name.startsWith(queues) || name.startsWith(repositories)).sorted().toList();
        Map<String, OpenResult> taken = new TreeMap<>();
        for (String name : own) {
            Optional<Lease> lease = Futures.await(replicated.peekLease(name), configuration.requestTimeout(), "lease of " + name);
            if (lease.isPresent() && NamespaceAdoption.isAdopter(lease.get().owner())) {
                taken.put(name, takeBack(replicated, configuration, name, lease.get().owner()));
            }
        }
        if (!taken.isEmpty()) {
            LOGGER.warn("kvs-spool cluster: took namespace {} back from its adopter: {} queue(s) {}", configuration.namespace(),
                taken.size(), taken.keySet());
        }
        return taken;
    }

    private static OpenResult takeBack(ReplicatedKvsOpener opener, KvsSpoolConfiguration configuration, String name, String holder)
        throws InterruptedException {
        String last = "";
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            OpenResult result = Futures.await(opener.takeOver(name, OpenOptions.writer(configuration.ownerName(), configuration.epoch())),
                configuration.requestTimeout(), "take back " + name);
            if (result.isOk()) {
                return result;
            }
            last = result.status() + " " + result.reason();
            Thread.sleep(configuration.requestTimeout().toMillis() / 10);
        }
        throw new IllegalStateException("kvs-spool: refusing to start: queue " + name + " of this node's namespace "
            + configuration.namespace() + " is held by " + holder + " and could not be taken back after " + ATTEMPTS
            + " attempts (" + last + ")");
    }
}
