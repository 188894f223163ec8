package org.jameskvs.james.queue;

import java.time.Duration;
import java.util.concurrent.CompletionException;

import javax.mail.MessagingException;

import org.apache.james.metrics.api.Metric;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueue.MailQueueException;
import org.apache.james.queue.api.MailQueue.MailQueueItem;
import org.apache.james.queue.api.MailQueueItemDecoratorFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.mailet.Mail;
import org.jameskvs.client.Ack;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands one James queue's mail out and settles it: the reader's flux of items ({@link MailQueueReader}),
 * and {@code done}. Dequeued mail stays in the KVS queue until {@code done}: SUCCESS and REJECT delete
 * it; RETRY stores the mail as it is now at the tail of its level, then deletes the old copy (as James's
 * memory queue re-enqueues it). Both wait for the store as an accepted enqueue does: a {@code done}
 * that failed because the store was busy would make James re-enqueue, reject or store the mail in its
 * error repository. A crash before done means the mail is delivered again after restart (at-least-once).
 *
 * <p>On a fenced node ({@link Fencing}) no mail is handed out and {@code done} deletes what it can,
 * leaving the rest (and every RETRY) in the queue for its owner, without failing.
 */
final class Dequeuer {
    private static final Logger LOGGER = LoggerFactory.getLogger(Dequeuer.class);

    private final MailQueueName name;
    private final Fencing fencing;
    private final StoreWrites writes;
    private final Enqueuer enqueuer;
    private final MailQueueReader reader;
    private final MailQueueItemDecoratorFactory decoratorFactory;
    private final Metric dequeuedMetric;

    Dequeuer(MailQueueName name, Fencing fencing, StoreWrites writes, Enqueuer enqueuer, MailQueueReader reader,
             MailQueueItemDecoratorFactory decoratorFactory, MetricFactory metricFactory) {
        this.name = name;
        this.fencing = fencing;
        this.writes = writes;
        this.enqueuer = enqueuer;
        this.reader = reader;
        this.decoratorFactory = decoratorFactory;
        this.dequeuedMetric = metricFactory.generate(MailQueue.DEQUEUED_METRIC_NAME_PREFIX + name.asString());
    }

    /** The item James gets for a message read from {@code level}; {@code queue} is the one it belongs to. */
    MailQueueItem toItem(KvsMailQueue queue, int level, StoredMessage message) throws MessagingException {
        Mail mail = MailCodec.decode(message.body(), MessageIds.asString(message.id()));
        return decoratorFactory.decorate(new KvsMailQueueItem(queue, mail, level, message.id()), name);
    }

    /** James starts processing the item: refused on a fenced node (see {@link FencedNodeHandsOutNoMail}). */
    void checkMayStart(KvsMailQueueItem item) {
        if (fencing.isFenced()) {
            LOGGER.info("Queue {}: mail {} read ahead before this node learned it is fenced: not processed, left in"
                + " the queue for the writer that holds it", name.asString(), item.mail().getName());
            throw new FencedNodeHandsOutNoMail(name.asString(), item.mail().getName(), fencing.cause().orElse("fenced"));
        }
    }

    void complete(KvsMailQueueItem item, MailQueueItem.CompletionStatus status) throws MailQueueException {
        String id = MessageIds.asString(item.id());
        if (fencing.isFenced() && status == MailQueueItem.CompletionStatus.RETRY) {
            leaveForTheQueuesOwner(item); // its copy in the queue is the retry (a requeue would wait for James to stop)
            return;
        }
        MailQueueException failure;
        try {
            if (status == MailQueueItem.CompletionStatus.RETRY) {
                enqueuer.enqueueAndWait(item.mail(), Duration.ZERO, false);
            }
            // Waits for the store like an accepted enqueue (EnqueueAbandonedAtShutdown if James stops meanwhile).
            Ack ack = writes.delete(item.mail().getName(), item.id(), item.level()).join();
            if (ack.isOk() || ack.status() == Status.NOT_FOUND) {
                dequeuedMetric.increment();
                reader.release(id);
                return;
            }
            failure = new MailQueueException("Cannot delete dequeued mail " + item.mail().getName() + ": "
                + ack.status() + " " + ack.reason());
        } catch (MailQueueException e) {
            failure = e;
        } catch (CompletionException e) {
            failure = Enqueuer.asMailQueueException(name.asString(), e.getCause(), item.mail()); // rethrows EnqueueAbandonedAtShutdown
        } catch (RuntimeException e) {
            failure = new MailQueueException("Cannot complete mail " + item.mail().getName() + " in " + name.asString(), e);
        }
        if (fencing.isFenced()) { // the requeue or the delete met the other writer
            leaveForTheQueuesOwner(item);
            return;
        }
        // Back to the readers: the mail is handed out again rather than forgotten.
        reader.release(id);
        reader.rescanAll();
        throw failure;
    }

    /**
     * This node is fenced and could not complete the mail: its queue belongs to another writer, which
     * hands the mail out again (one this node delivered is then delivered twice: at least once).
     * {@code done} returns normally, so James does nothing more with it (a failed {@code done} makes
     * James re-enqueue the mail, reject it, or store it in the error repository); the mail stays in
     * flight, so this node's reader never hands it out again.
     */
    private void leaveForTheQueuesOwner(KvsMailQueueItem item) {
        LOGGER.info("Queue {}: mail {} left in the queue for the writer that holds it (this James node is fenced)",
            name.asString(), item.mail().getName());
    }
}
