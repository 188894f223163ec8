package org.jameskvs.delivery;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.mailet.Mail;
import org.reactivestreams.Publisher;

/** James's queues with every enqueue counted per queue, delayed ones apart. */
final class RecordingQueueFactory implements MailQueueFactory<MailQueue> {
    private final MailQueueFactory<?> delegate;
    final Map<String, AtomicLong> enqueues = new ConcurrentHashMap<>();
    final AtomicLong delayedEnqueues = new AtomicLong();

    RecordingQueueFactory(MailQueueFactory<?> delegate) {
        this.delegate = delegate;
    }

    long enqueues(String queue) {
        AtomicLong count = enqueues.get(queue);
        return count == null ? 0 : count.get();
    }

    @Override
    public Optional<MailQueue> getQueue(MailQueueName name, PrefetchCount count) {
        return delegate.getQueue(name, count).map(this::recording);
    }

    @Override
    public MailQueue createQueue(MailQueueName name, PrefetchCount count) {
        return recording(delegate.createQueue(name, count));
    }

    @Override
    public Set<MailQueueName> listCreatedMailQueues() {
        return delegate.listCreatedMailQueues();
    }

    private MailQueue recording(MailQueue queue) {
        return new MailQueue() {
            @Override
            public MailQueueName getName() {
                return queue.getName();
            }

            @Override
            public void enQueue(Mail mail, Duration delay) throws MailQueueException {
                if (!delay.isZero()) {
                    delayedEnqueues.incrementAndGet();
                }
                enQueue(mail);
            }

            @Override
            public void enQueue(Mail mail) throws MailQueueException {
                enqueues.computeIfAbsent(queue.getName().asString(), n -> new AtomicLong()).incrementAndGet();
                queue.enQueue(mail);
            }

            @Override
            public Publisher<Void> enqueueReactive(Mail mail) {
                enqueues.computeIfAbsent(queue.getName().asString(), n -> new AtomicLong()).incrementAndGet();
                return queue.enqueueReactive(mail);
            }

            @Override
            public Publisher<MailQueueItem> deQueue() {
                return queue.deQueue();
            }

            @Override
            public void close() throws java.io.IOException {
                queue.close();
            }
        };
    }
}
