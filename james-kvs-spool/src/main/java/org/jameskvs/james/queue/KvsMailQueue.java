package org.jameskvs.james.queue;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

import javax.mail.MessagingException;

import org.apache.james.core.MailAddress;
import org.apache.james.metrics.api.GaugeRegistry;
import org.apache.james.metrics.api.Metric;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.metrics.api.TimeMetric;
import org.apache.james.queue.api.MailQueueItemDecoratorFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.mailet.Mail;
import org.jameskvs.client.Ack;
import org.jameskvs.client.QueueStat;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.Futures;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A James mail queue kept in KVS queues (one per priority level, see {@link PriorityLevels}). Each
 * enqueued copy is one KVS message: id random, priority and notBefore in the message header, the
 * {@link MailCodec encoded mail} as body. An enqueue returns only once the server acknowledged the
 * PUT, else it throws, so James never accepts (SMTP 250) a mail that is not stored. What is retried
 * first, and how long, depends on who enqueues ({@link Enqueuer}): the handle of an intake queue given
 * to an intake caller (SMTP, JMAP: {@link #forIntake()}) fails fast (SMTP 4xx); every other enqueue
 * carries mail already answered 250 that James holds alone, and waits for the store.
 *
 * <p>Once the node is fenced ({@link Fencing}: another writer holds its queues) it takes no mail in
 * and hands none out; {@code done} still deletes what it can, and leaves the rest (and every RETRY) in
 * the queue for its owner, without failing.
 *
 * <p>Dequeued mail stays in the KVS queue until {@code done}: SUCCESS and REJECT delete it; RETRY
 * stores the mail as it is now at the tail of its level, then deletes the old copy (as James's
 * memory queue re-enqueues it). Both wait for the store as an accepted enqueue does: a {@code done}
 * that failed because the store was busy would make James re-enqueue, reject or store the mail in
 * its error repository. A crash before done means the mail is delivered again after restart
 * (at-least-once).
 */
public class KvsMailQueue implements ManageableMailQueue {
    private static final Logger LOGGER = LoggerFactory.getLogger(KvsMailQueue.class);
    private final MailQueueName name;
    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final MailQueueItemDecoratorFactory decoratorFactory;
    private final MetricFactory metricFactory;
    private final Metric enqueuedMetric;
    private final Metric dequeuedMetric;
    private final Fencing fencing;
    private final Enqueuer enqueuer;
    private final MailQueueReader reader;
    private final Flux<MailQueueItem> dequeueFlux;
    /** True for the handle given to intake callers: its enqueues fail fast. */
    private final boolean intake;
    private volatile KvsMailQueue intakeHandle;

    KvsMailQueue(MailQueueName name, PriorityLevels levels, KvsSpoolConfiguration configuration, Fencing fencing,
                 OverdueEnqueues overdue, MailQueueItemDecoratorFactory decoratorFactory, MetricFactory metricFactory,
                 GaugeRegistry gaugeRegistry) {
        this.name = name;
        this.levels = levels;
        this.configuration = configuration;
        this.fencing = fencing;
        this.enqueuer = new Enqueuer(name.asString(), levels, configuration, fencing, overdue);
        this.decoratorFactory = decoratorFactory;
        this.metricFactory = metricFactory;
        this.enqueuedMetric = metricFactory.generate(ENQUEUED_METRIC_NAME_PREFIX + name.asString());
        this.dequeuedMetric = metricFactory.generate(DEQUEUED_METRIC_NAME_PREFIX + name.asString());
        this.reader = new MailQueueReader(name.asString(), levels, configuration, fencing, this::toItem);
        this.dequeueFlux = reader.subscribe();
        gaugeRegistry.register(QUEUE_SIZE_METRIC_NAME_PREFIX + name.asString(), this::sizeForGauge);
        this.intake = false;
    }

    /** The intake handle of {@code queue}: the same queue, reader and metrics; enqueues fail fast. */
    private KvsMailQueue(KvsMailQueue queue) {
        this.name = queue.name;
        this.levels = queue.levels;
        this.configuration = queue.configuration;
        this.fencing = queue.fencing;
        this.enqueuer = queue.enqueuer;
        this.decoratorFactory = queue.decoratorFactory;
        this.metricFactory = queue.metricFactory;
        this.enqueuedMetric = queue.enqueuedMetric;
        this.dequeuedMetric = queue.dequeuedMetric;
        this.reader = queue.reader;
        this.dequeueFlux = queue.dequeueFlux;
        this.intake = true;
    }

    /**
     * The handle for a caller whose enqueue answers a client that keeps the mail if it fails (SMTP's
     * {@code SendMailHandler}, JMAP): for an intake queue ({@code intakeQueues}) one whose enqueues
     * fail fast, else this queue. Equal to this queue; items it hands out belong to this queue.
     */
    KvsMailQueue forIntake() {
        if (intake || !configuration.isIntakeQueue(name.asString())) {
            return this;
        }
        KvsMailQueue handle = intakeHandle;
        if (handle == null) {
            synchronized (this) {
                if (intakeHandle == null) {
                    intakeHandle = new KvsMailQueue(this);
                }
                handle = intakeHandle;
            }
        }
        return handle;
    }

    @Override
    public MailQueueName getName() {
        return name;
    }

    // ---- enqueue

    @Override
    public void enQueue(Mail mail) throws MailQueueException {
        enQueue(mail, Duration.ZERO);
    }

    @Override
    public void enQueue(Mail mail, Duration delay) throws MailQueueException {
        try {
            put(mail, delay).join();
        } catch (CompletionException e) {
            throw asMailQueueException(e.getCause(), mail);
        }
    }

    @Override
    public Publisher<Void> enqueueReactive(Mail mail) {
        return Mono.defer(() -> Mono.fromFuture(put(mail, Duration.ZERO)))
            .onErrorMap(e -> !(e instanceof EnqueueAbandonedAtShutdown), e -> asMailQueueException(e, mail));
    }

    /** Stores the mail (see {@link Enqueuer} for what is retried); fails if it was not stored. */
    private CompletableFuture<Void> put(Mail mail, Duration delay) {
        TimeMetric timer = metricFactory.timer(ENQUEUED_TIMER_METRIC_NAME_PREFIX + name.asString());
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
        return enqueuer.store(mail.getName(), MessageIds.newId(), level, notBefore, body, intake)
            .thenAccept(ack -> {
                if (ack.status() == Status.FRAME_TOO_LARGE) {
                    throw new CompletionException(tooLarge(mail, "refused by the KVS server: " + ack.status() + " " + ack.reason()
                        + " (its frame.maxBytes is below kvs-spool's frameMaxBytes " + configuration.frameMaxBytes() + ")"));
                }
                if (!ack.isOk()) {
                    throw new CompletionException(new MailQueueException("KVS refused mail " + mail.getName()
                        + " in queue " + name.asString() + ": " + ack.status() + " " + ack.reason()));
                }
                timer.stopAndPublish();
                enqueuedMetric.increment();
                reader.onEnqueued(level, notBefore != 0);
            });
    }

    private MailTooLargeException tooLarge(Mail mail, String why) {
        return new MailTooLargeException("Mail " + mail.getName() + " is too large for queue " + name.asString() + ": " + why);
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

    private MailQueueException asMailQueueException(Throwable e, Mail mail) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof EnqueueAbandonedAtShutdown abandoned) {
            throw abandoned; // not an exception James may handle: see its Javadoc
        }
        if (cause instanceof MailQueueException) {
            return (MailQueueException) cause;
        }
        return new MailQueueException("Cannot enqueue mail " + mail.getName() + " in " + name.asString(),
            cause instanceof Exception ? (Exception) cause : new RuntimeException(cause));
    }

    // ---- dequeue

    @Override
    public Publisher<MailQueueItem> deQueue() {
        return dequeueFlux;
    }

    private MailQueueItem toItem(int level, StoredMessage message) throws MessagingException {
        Mail mail = MailCodec.decode(message.body(), MessageIds.asString(message.id()));
        return decoratorFactory.decorate(new KvsMailQueueItem(this, mail, level, message.id()), name);
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
                requeue(item);
            }
            // Waits for the store like an accepted enqueue (EnqueueAbandonedAtShutdown if James stops meanwhile).
            Ack ack = enqueuer.delete(item.mail().getName(), item.id(), item.level()).join();
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
            failure = asMailQueueException(e.getCause(), item.mail()); // rethrows EnqueueAbandonedAtShutdown
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

    private void requeue(KvsMailQueueItem item) throws MailQueueException {
        try {
            put(item.mail(), Duration.ZERO).join();
        } catch (CompletionException e) {
            throw asMailQueueException(e.getCause(), item.mail());
        }
    }

    // ---- management

    @Override
    public long getSize() throws MailQueueException {
        try {
            List<CompletableFuture<QueueStat>> stats = new ArrayList<>();
            for (int level : levels.levels()) {
                stats.add(levels.queue(level).stat());
            }
            long size = 0;
            for (CompletableFuture<QueueStat> future : stats) {
                QueueStat stat = Futures.await(future, configuration.requestTimeout(), "stat " + name.asString());
                if (!stat.isOk()) {
                    throw new MailQueueException("STAT failed on " + name.asString() + ": " + stat.status() + " " + stat.reason());
                }
                size += stat.size();
            }
            return size;
        } catch (RuntimeException e) {
            throw new MailQueueException("Cannot get the size of " + name.asString(), e);
        }
    }

    private Long sizeForGauge() {
        try {
            return getSize();
        } catch (MailQueueException e) {
            return -1L;
        }
    }

    /** Makes every delayed mail ready now; it keeps its place (position) in its level. */
    @Override
    public long flush() throws MailQueueException {
        long now = System.currentTimeMillis();
        long flushed = 0;
        try {
            QueueBrowser browser = new QueueBrowser(levels, configuration);
            while (browser.hasNext()) {
                QueueBrowser.Entry entry = browser.next();
                StoredMessage message = entry.message();
                if (message.notBefore() > 0) {
                    Ack ack = Futures.await(levels.queue(entry.level()).replace(message.id(), message.priority(), 0, message.state()),
                        configuration.requestTimeout(), "flush");
                    if (ack.isOk() && message.notBefore() > now) {
                        flushed++;
                    }
                }
            }
        } catch (RuntimeException e) {
            throw new MailQueueException("Cannot flush " + name.asString(), e);
        } finally {
            reader.rescanAll();
        }
        return flushed;
    }

    @Override
    public long clear() throws MailQueueException {
        long size = getSize();
        try {
            for (int level : levels.levels()) {
                Ack ack = Futures.await(levels.queue(level).clear(), configuration.requestTimeout(), "clear");
                if (!ack.isOk()) {
                    throw new MailQueueException("CLEAR failed on " + name.asString() + ": " + ack.status() + " " + ack.reason());
                }
            }
        } catch (RuntimeException e) {
            throw new MailQueueException("Cannot clear " + name.asString(), e);
        } finally {
            reader.rescanAll();
        }
        return size;
    }

    @Override
    public long remove(Type type, String value) throws MailQueueException {
        Predicate<Mail> matches = matcher(type, value);
        long removed = 0;
        try {
            QueueBrowser browser = new QueueBrowser(levels, configuration);
            while (browser.hasNext()) {
                QueueBrowser.Entry entry = browser.next();
                Mail mail = MailCodec.decode(entry.message().body(), MessageIds.asString(entry.message().id()));
                if (matches.test(mail)) {
                    Ack ack = Futures.await(levels.queue(entry.level()).delete(entry.message().id()),
                        configuration.requestTimeout(), "remove");
                    if (ack.isOk()) {
                        removed++;
                    }
                }
            }
        } catch (MessagingException | RuntimeException e) {
            throw new MailQueueException("Cannot remove " + type + "=" + value + " from " + name.asString(), e);
        } finally {
            reader.rescanAll();
        }
        return removed;
    }

    private static Predicate<Mail> matcher(Type type, String value) {
        switch (type) {
            case Name:
                return mail -> value.equals(mail.getName());
            case Sender:
                return mail -> mail.getMaybeSender().asString().equals(value);
            case Recipient:
                return mail -> mail.getRecipients().stream().map(MailAddress::asString).anyMatch(value::equals);
            default:
                throw new IllegalArgumentException("Unknown type " + type);
        }
    }

    @Override
    public MailQueueIterator browse() throws MailQueueException {
        QueueBrowser browser = new QueueBrowser(levels, configuration);
        return new MailQueueIterator() {
            @Override
            public boolean hasNext() {
                return browser.hasNext();
            }

            @Override
            public MailQueueItemView next() {
                StoredMessage message = browser.next().message();
                try {
                    Mail mail = MailCodec.decode(message.body(), MessageIds.asString(message.id()));
                    return new DefaultMailQueueItemView(mail, nextDelivery(message.notBefore()));
                } catch (MessagingException e) {
                    throw new IllegalStateException("Cannot decode mail " + MessageIds.asString(message.id()), e);
                }
            }

            @Override
            public void close() {
                // Nothing held: the browser reads block by block.
            }
        };
    }

    private static Optional<ZonedDateTime> nextDelivery(long notBefore) {
        if (notBefore <= 0) {
            return Optional.empty();
        }
        return Optional.of(Instant.ofEpochMilli(notBefore).atZone(ZoneOffset.UTC));
    }

    /**
     * Deliberately nothing: James's webadmin closes the queue object it got from the factory after
     * every call, while the spooler keeps using the same queue. The factory stops the queue at shutdown.
     */
    @Override
    public void close() {
    }

    /**
     * The KVS queue of one priority level, created if needed and known to the reader from now on:
     * where the cluster's adoption moves a lost node's mail ({@code org.jameskvs.james.cluster}).
     */
    org.jameskvs.client.KvsQueue levelQueue(int level) {
        return levels.queue(level);
    }

    /** Mail was put into {@code level} by something else than {@link #enQueue}: the reader looks again. */
    void arrived(int level, boolean delayed) {
        reader.onEnqueued(level, delayed);
    }

    /** James is stopping: the reader stops, waiting enqueues end (see {@link Enqueuer}). */
    void stop() {
        enqueuer.stop();
        reader.close();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KvsMailQueue && ((KvsMailQueue) o).name.equals(name);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return "KvsMailQueue{" + name.asString() + "}";
    }
}
