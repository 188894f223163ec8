package org.jameskvs.james.queue;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import javax.annotation.PreDestroy;
import javax.inject.Inject;
import javax.inject.Singleton;

import org.apache.james.metrics.api.GaugeRegistry;
import org.apache.james.metrics.api.MetricFactory;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueItemDecoratorFactory;
import org.apache.james.queue.api.MailQueueName;
import org.jameskvs.james.KvsQueues;

import com.google.common.collect.ImmutableSet;

/**
 * Creates and caches the {@link KvsMailQueue}s of this James node. A James queue exists once its
 * normal-priority KVS queue exists, so queues created before a restart are found again.
 * The prefetch count is ignored: read-ahead is the {@code readAheadWindow} setting.
 *
 * <p>James components ask for their queue once, at start. The class that asks decides which handle
 * it gets: an intake caller ({@code intakeCallers}: SMTP's {@code SendMailHandler}, JMAP, webadmin's
 * reprocessing) gets {@link KvsMailQueue#forIntake()}, whose enqueues fail fast because its client
 * still holds the mail; every other component (the spooler, the mailet context behind bounces and
 * forwards, {@code Requeue}, RemoteDelivery) gets the queue itself, whose enqueues wait for the store:
 * the mail they enqueue was answered 250 and James holds it alone.
 */
@Singleton
public class KvsMailQueueFactory implements MailQueueFactory<KvsMailQueue> {
    private final KvsQueues queues;
    private final MailQueueItemDecoratorFactory decoratorFactory;
    private final MetricFactory metricFactory;
    private final GaugeRegistry gaugeRegistry;
    private final ConcurrentHashMap<MailQueueName, KvsMailQueue> created = new ConcurrentHashMap<>();
    private final OverdueEnqueues overdueEnqueues = new OverdueEnqueues();

    @Inject
    public KvsMailQueueFactory(KvsQueues queues, MailQueueItemDecoratorFactory decoratorFactory,
                               MetricFactory metricFactory, GaugeRegistry gaugeRegistry) {
        this.queues = queues;
        this.decoratorFactory = decoratorFactory;
        this.metricFactory = metricFactory;
        this.gaugeRegistry = gaugeRegistry;
    }

    @Override
    public Optional<KvsMailQueue> getQueue(MailQueueName name, PrefetchCount count) {
        KvsMailQueue queue = created.get(name);
        if (queue == null && existingOnServer().contains(name)) {
            queue = created.computeIfAbsent(name, this::newQueue);
        }
        return Optional.ofNullable(queue).map(this::forCaller);
    }

    @Override
    public KvsMailQueue createQueue(MailQueueName name, PrefetchCount count) {
        return forCaller(created.computeIfAbsent(name, this::newQueue));
    }

    private KvsMailQueue forCaller(KvsMailQueue queue) {
        return caller().filter(queues.configuration()::isIntakeCaller).isPresent() ? queue.forIntake() : queue;
    }

    /**
     * The class that asked for a queue: the first frame outside this factory and James's
     * {@code MailQueueFactory} (whose default methods call this one). Once per component and queue.
     */
    private static Optional<String> caller() {
        return StackWalker.getInstance().walk(frames -> frames
            .map(StackWalker.StackFrame::getClassName)
            .filter(name -> !name.equals(KvsMailQueueFactory.class.getName()) && !name.equals(MailQueueFactory.class.getName()))
            .findFirst());
    }

    private KvsMailQueue newQueue(MailQueueName name) {
        PriorityLevels levels = new PriorityLevels(queues, name.asString());
        levels.discover();
        return new KvsMailQueue(name, levels, queues.configuration(), queues.fencing(), overdueEnqueues, decoratorFactory,
            metricFactory, gaugeRegistry);
    }

    @Override
    public Set<MailQueueName> listCreatedMailQueues() {
        Set<MailQueueName> names = new HashSet<>(created.keySet());
        names.addAll(existingOnServer());
        return ImmutableSet.copyOf(names);
    }

    private Set<MailQueueName> existingOnServer() {
        String prefix = queues.configuration().mailQueuePrefix();
        Set<MailQueueName> names = new HashSet<>();
        for (String kvsName : queues.existingNames(prefix)) {
            PriorityLevels.jamesQueueName(kvsName, prefix).map(MailQueueName::of).ifPresent(names::add);
        }
        return names;
    }

    /**
     * Where mail adopted from a lost node's {@code jamesQueue} at {@code level} goes: the same level of
     * this node's queue of that name (created if needed), so this node's mailet pipeline delivers it.
     */
    public AdoptionTarget adoptionTarget(String jamesQueue, int level) {
        KvsMailQueue queue = createQueue(MailQueueName.of(jamesQueue));
        org.jameskvs.client.KvsQueue kvsQueue = queue.levelQueue(level);
        return new AdoptionTarget(kvsQueue, delayed -> queue.arrived(level, delayed));
    }

    /** A level queue of this node and how to tell its reader that mail was put there. */
    public record AdoptionTarget(org.jameskvs.client.KvsQueue queue, java.util.function.Consumer<Boolean> arrived) {
    }

    /** Accepted mail waiting for the store past {@code acceptedMailRetryTimeout}, over every queue. */
    public OverdueEnqueues overdueEnqueues() {
        return overdueEnqueues;
    }

    /**
     * Stops the readers and ends the enqueues still waiting for the store; the KVS connection belongs
     * to whoever built {@link KvsQueues}.
     */
    @PreDestroy
    public void stop() {
        created.values().forEach(KvsMailQueue::stop);
        created.clear();
    }
}
