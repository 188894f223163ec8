package org.jameskvs.james.queue;

/**
 * Thrown when James starts processing a dequeued mail (its first {@code getMail()}) after this node
 * learned it is fenced: the mail was read ahead before the fence was known, and another writer now
 * holds the queue and delivers it. This node must not deliver it too (it could not delete it, and the
 * mail would be delivered twice).
 *
 * <p>An {@link Error} for the same reason as {@link EnqueueAbandonedAtShutdown}: James 3.8.1's spooler
 * and RemoteDelivery catch {@code Exception} around a mail's processing and would turn one into a
 * re-enqueue, a rejection or the error repository. An Error passes through them; Reactor logs it and
 * goes on with the next item. The item is never completed, so the mail stays in its queue, in flight
 * for this node's reader (never handed out again here), for the queue's owner.
 */
public final class FencedNodeHandsOutNoMail extends Error {
    private static final long serialVersionUID = 1L;

    FencedNodeHandsOutNoMail(String queueName, String mailName, String cause) {
        super("Mail " + mailName + " of queue " + queueName + " not processed: this James node is fenced (" + cause
            + "); it stays in the queue for the writer that holds it", null, false, false);
    }
}
