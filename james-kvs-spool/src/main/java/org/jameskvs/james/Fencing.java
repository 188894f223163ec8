package org.jameskvs.james;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether another writer holds this James node's KVS queues. A node writes its queues under its
 * {@code ownerName} and epoch; an answer {@code STALE_EPOCH} (a newer epoch owns the queue) or
 * {@code QUEUE_LOCKED} (another connection holds its write handle, or another owner holds the
 * replicated queue) means some other process writes them now: a node started with the same
 * {@code ownerName}/{@code namespace}, or the node that took this one's queues over while it was
 * paused. This node is then <em>fenced</em>, for good (until it is restarted): it must not take mail
 * in, since its writes are refused, nor deliver queued mail, since it could not delete what it
 * delivered and the queues' new owner would deliver it again. The mail stays in the queues, for their
 * new owner.
 *
 * <p>The first such answer is logged once, as an error naming the queue, this node's identity and
 * epoch; {@link org.jameskvs.james.health.KvsSpoolHealthCheck} reports it. Everything that reacts
 * (intake refused, readers stopped, accepted mail kept waiting) asks {@link #isFenced()}.
 */
public final class Fencing {
    private static final Logger LOGGER = LoggerFactory.getLogger(Fencing.class);

    private final String ownerName;
    private final String namespace;
    private final AtomicReference<String> fenced = new AtomicReference<>();

    public Fencing(KvsSpoolConfiguration configuration) {
        this.ownerName = configuration.ownerName();
        this.namespace = configuration.namespace();
    }

    /** True for the answers that show another writer holding the queue. */
    public static boolean showsAnotherWriter(Status status) {
        return status == Status.STALE_EPOCH || status == Status.QUEUE_LOCKED;
    }

    /**
     * Looks at one answer of {@code queue}, which this node holds (or tried to open) at {@code epoch}.
     *
     * @return true if the answer shows another writer: the node is fenced from now on
     */
    public boolean observe(String queue, long epoch, Status status, String reason) {
        if (!showsAnotherWriter(status)) {
            return false;
        }
        String what = "queue " + queue + " answered " + status + " (" + reason + "): another writer holds it."
            + " This James node writes as ownerName=" + ownerName + ", namespace=" + namespace + ", epoch=" + epoch;
        if (fenced.compareAndSet(null, what)) {
            LOGGER.error("KVS spool FENCED: {}. It has stopped: new mail is refused (SMTP 4xx) and queued mail is"
                + " no longer delivered; the mail stays in the KVS queues for the writer that holds them."
                + " Two James nodes must not share ownerName and namespace; restart this node only once the other"
                + " writer is gone, or give it its own ownerName/namespace.", what);
        }
        return true;
    }

    public boolean isFenced() {
        return fenced.get() != null;
    }

    /** What fenced this node (the first answer that showed another writer), if it is fenced. */
    public Optional<String> cause() {
        return Optional.ofNullable(fenced.get());
    }
}
