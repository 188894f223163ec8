package org.jameskvs.james.queue;

import java.time.Duration;

import javax.mail.MessagingException;

import org.apache.james.metrics.api.GaugeRegistry;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.queue.api.MailQueueItemDecoratorFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.mailet.Mail;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;
import org.reactivestreams.Publisher;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A James mail queue kept in KVS queues (one per priority level, see {@link PriorityLevels}), split the
 * way James's RabbitMQ queue is: {@link Enqueuer} stores mail, {@link Dequeuer} hands it out and settles
 * it, {@link QueueManagement} serves webadmin; this class only joins them to James's interface. Each
 * enqueued copy is one KVS message: id random, priority and notBefore in the message header, the
 * {@link MailCodec encoded mail} as body. What an enqueue retries, and how long, depends on who
 * enqueues ({@link StoreWrites}): the handle of an intake queue given to an intake caller (SMTP, JMAP:
 * {@link #forIntake()}) fails fast (SMTP 4xx); every other enqueue carries mail already answered 250
 * that James holds alone, and waits for the store.
 *
 * <p>Once the node is fenced ({@link Fencing}: another writer holds its queues) it takes no mail in
 * and hands none out (see {@link Dequeuer}).
 */
public class KvsMailQueue implements ManageableMailQueue {
    private final MailQueueName name;
    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final StoreWrites writes;
    private final MailQueueReader reader;
    private final Enqueuer enqueuer;
    private final Dequeuer dequeuer;
    private final QueueManagement management;
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
        this.writes = new StoreWrites(name.asString(), levels, configuration, fencing, overdue);
        this.reader = new MailQueueReader(name.asString(), levels, configuration, fencing, this::toItem);
        this.enqueuer = new Enqueuer(name.asString(), configuration, writes, metricFactory, reader);
        this.dequeuer = new Dequeuer(name, fencing, writes, enqueuer, reader, decoratorFactory, metricFactory);
        this.management = new QueueManagement(name.asString(), levels, configuration, reader);
        this.dequeueFlux = reader.subscribe();
        gaugeRegistry.register(QUEUE_SIZE_METRIC_NAME_PREFIX + name.asString(), management::sizeForGauge);
        this.intake = false;
    }

    /** The intake handle of {@code queue}: the same queue, reader and metrics; enqueues fail fast. */
    private KvsMailQueue(KvsMailQueue queue) {
        this.name = queue.name;
        this.levels = queue.levels;
        this.configuration = queue.configuration;
        this.writes = queue.writes;
        this.reader = queue.reader;
        this.enqueuer = queue.enqueuer;
        this.dequeuer = queue.dequeuer;
        this.management = queue.management;
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

    @Override
    public void enQueue(Mail mail) throws MailQueueException {
        enQueue(mail, Duration.ZERO);
    }

    @Override
    public void enQueue(Mail mail, Duration delay) throws MailQueueException {
        enqueuer.enqueueAndWait(mail, delay, intake);
    }

    @Override
    public Publisher<Void> enqueueReactive(Mail mail) {
        return Mono.defer(() -> Mono.fromFuture(enqueuer.enqueue(mail, Duration.ZERO, intake)))
            .onErrorMap(e -> !(e instanceof EnqueueAbandonedAtShutdown), e -> Enqueuer.asMailQueueException(name.asString(), e, mail));
    }

    @Override
    public Publisher<MailQueueItem> deQueue() {
        return dequeueFlux;
    }

    private MailQueueItem toItem(int level, StoredMessage message) throws MessagingException {
        return dequeuer.toItem(this, level, message);
    }

    /** James starts processing the item (see {@link Dequeuer#checkMayStart}). */
    void checkMayStart(KvsMailQueueItem item) {
        dequeuer.checkMayStart(item);
    }

    /** James's {@code done} (see {@link Dequeuer#complete}). */
    void complete(KvsMailQueueItem item, MailQueueItem.CompletionStatus status) throws MailQueueException {
        dequeuer.complete(item, status);
    }

    @Override
    public long getSize() throws MailQueueException {
        return management.getSize();
    }

    /** Makes every delayed mail ready now; it keeps its place (position) in its level. */
    @Override
    public long flush() throws MailQueueException {
        return management.flush();
    }

    @Override
    public long clear() throws MailQueueException {
        return management.clear();
    }

    @Override
    public long remove(Type type, String value) throws MailQueueException {
        return management.remove(type, value);
    }

    @Override
    public MailQueueIterator browse() throws MailQueueException {
        return management.browse();
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
    KvsQueue levelQueue(int level) {
        return levels.queue(level);
    }

    /** Mail was put into {@code level} by something else than {@link #enQueue}: the reader looks again. */
    void arrived(int level, boolean delayed) {
        reader.onEnqueued(level, delayed);
    }

    /** James is stopping: the reader stops, waiting enqueues end (see {@link StoreWrites}). */
    void stop() {
        writes.stop();
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
