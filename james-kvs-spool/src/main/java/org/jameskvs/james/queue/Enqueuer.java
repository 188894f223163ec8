package org.jameskvs.james.queue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import javax.mail.MessagingException;

import org.apache.james.metrics.api.Metric;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.metrics.api.TimeMetric;
import org.apache.james.queue.api.MailQueue;
import org.apache.mailet.Mail;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;

/**
 * Enqueues into one James queue: encodes the mail ({@link MailCodec}), checks its size, stores it in its
 * priority level through {@link StoreWrites} (which retries what the caller allows), counts it and tells
 * the reader. An enqueue completes only once the server acknowledged the PUT, else it fails, so James
 * never accepts (SMTP 250) a mail that is not stored.
 */
final class Enqueuer {
    private final String queueName;
    private final KvsSpoolConfiguration configuration;
    private final StoreWrites writes;
    private final MetricFactory metricFactory;
    private final Metric enqueuedMetric;
    private final MailQueueReader reader;

    Enqueuer(String queueName, KvsSpoolConfiguration configuration, StoreWrites writes, MetricFactory metricFactory,
             MailQueueReader reader) {
        this.queueName = queueName;
        this.configuration = configuration;
        this.writes = writes;
        this.metricFactory = metricFactory;
        this.enqueuedMetric = metricFactory.generate(MailQueue.ENQUEUED_METRIC_NAME_PREFIX + queueName);
        this.reader = reader;
    }

    /**
     * Stores the mail, ready after {@code delay}; {@code intake}: for a caller that answers a client
     * still holding the mail (fails fast, see {@link StoreWrites}). Fails if the mail was not stored.
     */
    CompletableFuture<Void> enqueue(Mail mail, Duration delay, boolean intake) {
        TimeMetric timer = metricFactory.timer(MailQueue.ENQUEUED_TIMER_METRIC_NAME_PREFIX + queueName);
        int level;
        byte[] body;
        try {
            level = MailPriority.of(mail);
            body = MailCodec.encode(mail);
            if (body.length > configuration.maxMailBytes()) {
                // Checked here rather than left to the server: an oversized PUT would cross the
                // network whole before its FRAME_TOO_LARGE, and could never succeed anyway.
                throw tooLarge(mail, body.length + " bytes encoded, over the " + configuration.maxMailBytes()
                    + " the KVS servers store (frameMaxBytes " + configuration.frameMaxBytes() + ")");
            }
        } catch (MessagingException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        long notBefore = notBefore(delay);
        return writes.store(mail.getName(), MessageIds.newId(), level, notBefore, body, intake)
            .thenAccept(ack -> {
                if (ack.status() == Status.FRAME_TOO_LARGE) {
                    throw new CompletionException(tooLarge(mail, "refused by the KVS server: " + ack.status() + " " + ack.reason()
                        + " (its frame.maxBytes is below kvs-spool's frameMaxBytes " + configuration.frameMaxBytes() + ")"));
                }
                if (!ack.isOk()) {
                    throw new CompletionException(new MailQueue.MailQueueException("KVS refused mail " + mail.getName()
                        + " in queue " + queueName + ": " + ack.status() + " " + ack.reason()));
                }
                timer.stopAndPublish();
                enqueuedMetric.increment();
                reader.onEnqueued(level, notBefore != 0);
            });
    }

    /** Like {@link #enqueue}, waiting; the failure as James's {@link MailQueue.MailQueueException}. */
    void enqueueAndWait(Mail mail, Duration delay, boolean intake) throws MailQueue.MailQueueException {
        try {
            enqueue(mail, delay, intake).join();
        } catch (CompletionException e) {
            throw asMailQueueException(queueName, e.getCause(), mail);
        }
    }

    private MailTooLargeException tooLarge(Mail mail, String why) {
        return new MailTooLargeException("Mail " + mail.getName() + " is too large for queue " + queueName + ": " + why);
    }

    /** 0 (ready now) for no or negative delay; saturates for delays beyond the epoch-ms range. */
    private static long notBefore(Duration delay) {
        if (delay.isNegative() || delay.isZero()) {
            return 0;
        }
        try {
            return Math.addExact(System.currentTimeMillis(), delay.toMillis());
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * A write's failure as James's exception; {@link EnqueueAbandonedAtShutdown} is thrown as it is
     * (not an exception James may handle: see its Javadoc).
     */
    static MailQueue.MailQueueException asMailQueueException(String queueName, Throwable e, Mail mail) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof EnqueueAbandonedAtShutdown abandoned) {
            throw abandoned;
        }
        if (cause instanceof MailQueue.MailQueueException queueException) {
            return queueException;
        }
        return new MailQueue.MailQueueException("Cannot enqueue mail " + mail.getName() + " in " + queueName,
            cause instanceof Exception ? (Exception) cause : new RuntimeException(cause));
    }
}
