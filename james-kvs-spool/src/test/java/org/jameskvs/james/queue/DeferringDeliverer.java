package org.jameskvs.james.queue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.apache.james.queue.api.MailQueue;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.Mail;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * What James 3.8.1's RemoteDelivery does with its queue (its DeliveryRunnable), with a next hop the
 * test switches up or down: up to 256 mails in progress on a pool of threads; a mail the next hop
 * defers is enqueued again, with a delay growing with its retries, into the same queue, and the item
 * it came from is then completed with SUCCESS. Counts attempts and deliveries per mail name.
 */
final class DeferringDeliverer implements AutoCloseable {
    private static final AttributeName RETRIES = AttributeName.of("test-retries");
    /** RemoteDelivery's flatMap concurrency (Reactor's Queues.SMALL_BUFFER_SIZE). */
    private static final int CONCURRENCY = 256;

    private final MailQueue queue;
    private final List<Duration> delays;
    private final Scheduler workers = Schedulers.newBoundedElastic(20, 100_000, "test-remote-delivery");
    private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    private final LongAdder attemptCount = new LongAdder();
    private final LongAdder deliveryCount = new LongAdder();
    private final AtomicInteger inProgress = new AtomicInteger();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final Disposable subscription;
    private volatile boolean hopUp;

    /** Starts dequeuing; the n-th deferral of a mail uses {@code delays[n]} (the last one repeats). */
    DeferringDeliverer(MailQueue queue, List<Duration> delays) {
        this.queue = queue;
        this.delays = List.copyOf(delays);
        this.subscription = Flux.from(queue.deQueue())
            .doOnNext(item -> inProgress.incrementAndGet())
            .flatMap(item -> Mono.fromRunnable(() -> attempt(item)).subscribeOn(workers), CONCURRENCY)
            .subscribe(any -> { }, failures::add);
    }

    void hopUp(boolean up) {
        hopUp = up;
    }

    private void attempt(MailQueue.MailQueueItem item) {
        try {
            Mail mail = item.getMail();
            attempts.computeIfAbsent(mail.getName(), any -> new AtomicInteger()).incrementAndGet();
            attemptCount.increment();
            if (hopUp) {
                deliveries.computeIfAbsent(mail.getName(), any -> new AtomicInteger()).incrementAndGet();
                deliveryCount.increment();
            } else {
                int retries = mail.getAttribute(RETRIES).flatMap(a -> a.getValue().valueAs(Integer.class)).orElse(0);
                mail.setAttribute(new Attribute(RETRIES, AttributeValue.of(retries + 1)));
                queue.enQueue(mail, delays.get(Math.min(retries, delays.size() - 1)));
            }
            item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
        } catch (Exception | AssertionError e) {
            failures.add(e);
        } finally {
            inProgress.decrementAndGet();
        }
    }

    /** Mails handed out and not yet completed. */
    int inProgress() {
        return inProgress.get();
    }

    long attempts() {
        return attemptCount.sum();
    }

    int attemptsOf(String name) {
        AtomicInteger count = attempts.get(name);
        return count == null ? 0 : count.get();
    }

    long deliveries() {
        return deliveryCount.sum();
    }

    int distinctDelivered() {
        return deliveries.size();
    }

    /** Mails delivered more than once: name -> deliveries. */
    Map<String, Integer> deliveredTwice() {
        Map<String, Integer> twice = new java.util.TreeMap<>();
        deliveries.forEach((name, count) -> {
            if (count.get() > 1) {
                twice.put(name, count.get());
            }
        });
        return twice;
    }

    List<Throwable> failures() {
        return failures;
    }

    @Override
    public void close() {
        subscription.dispose();
        workers.dispose();
    }
}
