package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import org.apache.james.lifecycle.api.LifecycleUtil;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueue.MailQueueItem;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.Mail;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Delayed mail at O(1) per mail: one FIFO queue per configured retry delay ({@code <prefix>delay-<i>}),
 * instead of the lane queue's own delayed enqueue (whose reader scans past delayed entries and rescans
 * when one comes due: O(backlog) per due mail). Every mail in a tier waits the same delay, so the tier
 * is in due order: its mover looks only at the head, waits until it is due, then puts it back in its
 * lane queue and only after that removes it from the tier. James holds at most the queue reader's
 * read-ahead per tier, however many mails are delayed.
 */
final class DelayTiers implements AutoCloseable {
    private static final Logger LOGGER = LoggerFactory.getLogger(DelayTiers.class);
    static final AttributeName DUE_AT = AttributeName.of("org.jameskvs.delivery.dueAtEpochMillis");

    private final LaneDeliveryConfig config;
    private final Clock clock;
    private final List<MailQueue> tiers = new ArrayList<>();
    private final List<Disposable> movers = new ArrayList<>();
    private final TailDomainCounts tailCounts;

    DelayTiers(LaneDeliveryConfig config, MailQueueFactory<?> queueFactory, Clock clock, TailDomainCounts tailCounts) {
        this.config = config;
        this.clock = clock;
        this.tailCounts = tailCounts;
        for (int i = 0; i < config.retryDelays().size(); i++) {
            tiers.add(queueFactory.createQueue(org.apache.james.queue.api.MailQueueName.of(tierName(config, i))));
        }
    }

    static String tierName(LaneDeliveryConfig config, int tier) {
        return config.queuePrefix() + "delay-" + String.format(Locale.ROOT, "%02d", tier);
    }

    /**
     * Starts moving due mail back into the lane queue {@code laneQueueOfDomain} names for its recipients'
     * domain (the store waits for the queue's answer, so on {@code io}, not on the timer thread).
     */
    void start(Function<String, MailQueue> laneQueueOfDomain, Scheduler io) {
        for (MailQueue tier : tiers) {
            movers.add(Flux.from(tier.deQueue())
                .concatMap(item -> Mono.delay(untilDue(item.getMail()))
                    .then(Mono.<Void>fromRunnable(() -> moveBack(item, laneQueueOfDomain)).subscribeOn(io)))
                .subscribe(ignored -> { }, e -> LOGGER.error("A delay tier stopped moving mail", e)));
        }
    }

    /**
     * Parks {@code mail} after its {@code failures}-th failure in the tier of that retry delay; returns when
     * it is stored. Returns its due time (epoch ms).
     */
    long park(Mail mail, int failures) throws Exception {
        int tier = Math.min(Math.max(failures, 1), tiers.size()) - 1;
        long dueAt = clock.millis() + config.retryDelay(failures).toMillis();
        mail.setAttribute(new Attribute(DUE_AT, AttributeValue.of(dueAt)));
        tiers.get(tier).enQueue(mail);
        tailCounts.parked(mail);
        return dueAt;
    }

    /**
     * Parks a suspended domain's mail (not a failure: its attempt count is unchanged) in the first tier
     * whose delay covers {@code remaining}, else the longest; returns its due time (epoch ms).
     */
    long parkWhileSuspended(Mail mail, Duration remaining) throws Exception {
        int tier = tiers.size() - 1;
        for (int i = 0; i < tiers.size(); i++) {
            if (config.retryDelays().get(i).compareTo(remaining) >= 0) {
                tier = i;
                break;
            }
        }
        long dueAt = clock.millis() + config.retryDelays().get(tier).toMillis();
        mail.setAttribute(new Attribute(DUE_AT, AttributeValue.of(dueAt)));
        tiers.get(tier).enQueue(mail);
        tailCounts.parked(mail);
        return dueAt;
    }

    private Duration untilDue(Mail mail) {
        long dueAt = mail.getAttribute(DUE_AT).map(a -> a.getValue().value()).filter(Number.class::isInstance)
            .map(v -> ((Number) v).longValue()).orElse(0L);
        return Duration.ofMillis(Math.max(0, dueAt - clock.millis()));
    }

    private void moveBack(MailQueueItem item, Function<String, MailQueue> laneQueueOfDomain) {
        Mail mail = item.getMail();
        try {
            String domain = mail.getRecipients().iterator().next().getDomain().asString();
            mail.removeAttribute(DUE_AT);
            laneQueueOfDomain.apply(domain).enQueue(mail);
            tailCounts.movedBack(mail);
            item.done(MailQueueItem.CompletionStatus.SUCCESS);
            LifecycleUtil.dispose(mail);
        } catch (Exception e) {
            LOGGER.error("Delay tier: mail {} not moved back to its lane yet; the tier hands it out again", mail.getName(), e);
            try {
                item.done(MailQueueItem.CompletionStatus.RETRY);
            } catch (Exception again) {
                LOGGER.error("Delay tier: cannot give mail {} back", mail.getName(), again);
            }
        }
    }

    List<MailQueue> queues() {
        return List.copyOf(tiers);
    }

    @Override
    public void close() {
        movers.forEach(Disposable::dispose);
    }
}
