package org.jameskvs.james.queue;

import org.apache.james.queue.api.MailQueue;
import org.apache.mailet.Mail;

/**
 * A dequeued mail and the KVS message holding it; {@link #done} settles it in the queue. James's first
 * {@link #getMail()} is where its processing starts: on a fenced node it throws
 * {@link FencedNodeHandsOutNoMail} instead (mail read ahead before the fence was known is not
 * delivered by this node).
 */
final class KvsMailQueueItem implements MailQueue.MailQueueItem {
    private final KvsMailQueue queue;
    private final Mail mail;
    private final int level;
    private final byte[] id;
    private volatile boolean started;

    KvsMailQueueItem(KvsMailQueue queue, Mail mail, int level, byte[] id) {
        this.queue = queue;
        this.mail = mail;
        this.level = level;
        this.id = id;
    }

    @Override
    public Mail getMail() {
        if (!started) {
            queue.checkMayStart(this);
            started = true;
        }
        return mail;
    }

    /** The mail, for the queue's own use (not a start of processing). */
    Mail mail() {
        return mail;
    }

    int level() {
        return level;
    }

    byte[] id() {
        return id;
    }

    @Override
    public void done(CompletionStatus status) throws MailQueue.MailQueueException {
        queue.complete(this, status);
    }
}
