package org.jameskvs.james.queue;

/**
 * Ends an enqueue of accepted mail (answered 250) that was still waiting for the KVS store, or for
 * fencing to end, when James stopped. The mail stays in the queue James read it from: James never
 * completed that queue item, so it is processed again after a restart (or by the queues' new owner).
 *
 * <p>An {@link Error} on purpose, so that James's mail processing lets it through untouched. James
 * 3.8.1 turns a mailet's Exception into the error processor (ProcessorImpl catches Exception), and
 * a failed spool or outgoing item into a re-enqueue, a REJECT or a RETRY (JamesMailSpooler and
 * RemoteDelivery's DeliveryRunnable catch Exception around the item's {@code done}); none catches an
 * Error, so the item is left as it is and the mail reaches neither the error repository nor a bounce.
 * Reactor, running those steps, logs it as any other failure (it is not one of its fatal errors).
 */
public final class EnqueueAbandonedAtShutdown extends Error {
    private static final long serialVersionUID = 1L;

    EnqueueAbandonedAtShutdown(String queueName, String mailName, String why) {
        this("Mail " + mailName + " not enqueued into " + queueName + " (" + why + "); it stays in the queue it was"
            + " read from and is processed again after a restart");
    }

    private EnqueueAbandonedAtShutdown(String message) {
        super(message, null, false, false);
    }

    /** The delete of a mail done was still waiting: the mail stays in its queue, processed again after a restart. */
    static EnqueueAbandonedAtShutdown delete(String queueName, String mailName, String why) {
        return new EnqueueAbandonedAtShutdown("Mail " + mailName + " done but not deleted from " + queueName + " (" + why
            + "); it stays in the queue and is processed again after a restart (at least once)");
    }
}
