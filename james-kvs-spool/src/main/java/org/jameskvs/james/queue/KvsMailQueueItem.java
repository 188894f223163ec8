package org.jameskvs.james.queue;

import org.apache.james.queue.api.MailQueue;
import org.apache.mailet.Mail;

/** A dequeued mail and the KVS message holding it; {@link #done} settles it in the queue. */
final class KvsMailQueueItem implements MailQueue.MailQueueItem {
    private final KvsMailQueue queue;
    private final Mail mail;
    private final int level;
    private final byte[] id;

    KvsMailQueueItem(KvsMailQueue queue, Mail mail, int level, byte[] id) {
        this.queue = queue;
        this.mail = mail;
        this.level = level;
        this.id = id;
    }

    @Override
    public Mail getMail() {
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
