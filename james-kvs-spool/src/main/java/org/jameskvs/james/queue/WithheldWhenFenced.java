package org.jameskvs.james.queue;

import org.apache.james.queue.api.MailQueue;
import org.apache.mailet.Mail;
import org.jameskvs.james.Fencing;

/**
 * What James's dequeuers get for a dequeued mail: once this node is fenced, a mail they have not
 * started on yet is withheld ({@link #getMail()} throws) instead of delivered. James takes more mail
 * off a queue than it works on at once (RemoteDelivery keeps up to 256 waiting for its delivery
 * threads); a node paused past its lease resumes with those still in hand while the node that adopted
 * its queues delivers the same mail. Withheld, they are delivered once, by the queues' new writer:
 * duplicates are left only for the mail a thread had already started on when the node was paused.
 */
final class WithheldWhenFenced implements MailQueue.MailQueueItem {
    private final KvsMailQueueItem item;
    private final Fencing fencing;

    WithheldWhenFenced(KvsMailQueueItem item, Fencing fencing) {
        this.item = item;
        this.fencing = fencing;
    }

    @Override
    public Mail getMail() {
        if (fencing.isFenced()) {
            throw new IllegalStateException("KVS spool fenced: mail " + item.getMail().getName() + " withheld, left in the"
                + " queue for the writer that holds it (" + fencing.cause().orElse("") + ")");
        }
        return item.getMail();
    }

    @Override
    public void done(CompletionStatus status) throws MailQueue.MailQueueException {
        item.done(status);
    }
}
