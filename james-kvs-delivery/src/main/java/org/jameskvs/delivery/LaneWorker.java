package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.james.core.MailAddress;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueue.MailQueueItem;
import org.apache.james.lifecycle.api.LifecycleUtil;
import org.apache.james.server.core.MailImpl;
import org.apache.mailet.Mail;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Delivers one lane's queue: at most {@code concurrency} mails of the lane in delivery at once (the
 * flatMap bound, so also at most that many connections; within it the {@link AdaptiveLimit} starts at
 * {@code initialConcurrency} and adapts), each sent over a kept connection where one
 * is idle. The mail leaves the lane queue only after the remote 250 (its recipients refused
 * temporarily are parked in a {@link DelayTiers} queue first, those refused permanently to the bounce
 * path first). While a dedicated lane is suspended its dequeued mails wait, holding no connection and
 * reading no more mail, until the suspension ends: other lanes are not affected. In a bucket, a
 * suspended tail domain's mails are parked in a delay queue until its suspension ends, and the
 * bucket's other domains go on.
 */
final class LaneWorker implements AutoCloseable {
    private static final Logger LOGGER = LoggerFactory.getLogger(LaneWorker.class);
    /** How often mail held by a suspended lane looks again whether the suspension is over. */
    private static final Duration SUSPENSION_CHECK = Duration.ofMillis(200);
    /** How often a delivery that found every connection slot of its lane taken (on any node) tries again. */
    private static final Duration SLOT_WAIT = Duration.ofMillis(20);

    private final LaneState state;
    private final MailQueue queue;
    private final MxResolver resolver;
    private final LaneDeliveryConfig config;
    private final Bouncer bouncer;
    private final Scheduler io;
    private final Clock clock;
    private final LaneConnections connections;
    private final DelayTiers delays;
    private final RatePacer pacer;
    private final SharedLimits limits;
    private final AdaptiveLimit limit;
    private final TailDomainCounts tailCounts;
    /** Throttled tail domains' mails waiting for their place in their domain's pacing, off the lane's flow. */
    private final AtomicInteger waitingAside = new AtomicInteger();
    /**
     * Their subscriptions (wait, then delivery), disposed at close; a finished one is forgotten at the next
     * wait, so a few are kept: those still waiting or in delivery, at most about twice the concurrency.
     */
    private final java.util.Set<Disposable> aside = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private Disposable subscription;

    LaneWorker(LaneState state, MailQueue queue, MxResolver resolver, LaneDeliveryConfig config, Bouncer bouncer,
               Scheduler io, Clock clock, DelayTiers delays, SharedLimits limits, TailDomainCounts tailCounts) {
        this.state = state;
        this.tailCounts = tailCounts;
        this.delays = delays;
        this.queue = queue;
        this.resolver = resolver;
        this.config = config;
        this.bouncer = bouncer;
        this.io = io;
        this.clock = clock;
        this.connections = new LaneConnections(state.lane(), config, limits, state.stats(), clock);
        this.limits = limits;
        this.pacer = new RatePacer(() -> rate() * limits.rateShare(state.lane()), System::nanoTime);
        this.limit = new AdaptiveLimit(config.initialConcurrency(), state.concurrency());
        state.stats().currentLimit = limit::current;
    }

    void start() {
        subscription = Flux.from(queue.deQueue())
            .flatMap(this::handle, state.concurrency())
            .subscribe(ignored -> { }, e -> LOGGER.error("Lane {} stopped delivering", state.lane().name(), e));
    }

    /** Closes connections idle past their time (called periodically). */
    void closeIdleConnections() {
        connections.closeExpired();
    }

    private Mono<Void> handle(MailQueueItem item) {
        if (bounceOrdered(item) != null) {
            return Mono.<Void>fromRunnable(() -> bounceByOrder(item)).subscribeOn(io);
        }
        if (state.suspension().remaining().isZero()) {
            String domain = domainOf(item);
            DomainThrottles.Throttle throttle = domain == null ? null : state.stats().domainThrottles.active(domain, clock.millis());
            return throttle == null ? paced(item, domain) : pacedForDomain(item, domain, throttle);
        }
        state.stats().held.incrementAndGet();
        return awaitResumption(item).doFinally(signal -> state.stats().held.decrementAndGet())
            .then(Mono.defer(() -> handle(item)));
    }

    /** Delivers {@code item} in its place of the lane's pacing. */
    private Mono<Void> paced(MailQueueItem item, String domain) {
        Mono<Void> delivery = limit.acquire().then(reserve(domain))
            .flatMap(reservation -> Mono.fromCallable(() -> deliver(item, domain, reservation)).subscribeOn(io))
            .doOnNext(limit::release)
            .onErrorResume(e -> { // deliver() handles its failures; this keeps the lane's flux alive regardless
                LOGGER.error("Lane {}: unexpected delivery failure", state.lane().name(), e);
                limit.release(AdaptiveLimit.Feedback.NOTHING);
                return Mono.empty();
            })
            .then();
        Duration wait = pacer.reserve();
        if (rate() > 0) {
            limits.demand(state.lane(), wait);
        }
        return wait.isZero() ? delivery : Mono.delay(wait).then(delivery);
    }

    /**
     * A mail of a throttled tail domain: it waits for its place in the domain's own pacing aside, off the
     * lane's flow (which reads on and serves the bucket's other domains), then takes its place in the
     * lane's pacing. At most {@code concurrency} such mails wait aside per lane on this node, so the heap
     * does not grow with a throttled domain's backlog; the others are parked in the shortest delay tier
     * (as a suspended tail domain's are) and come back to the lane later.
     */
    private Mono<Void> pacedForDomain(MailQueueItem item, String domain, DomainThrottles.Throttle throttle) {
        if (waitingAside.incrementAndGet() > state.concurrency()) {
            waitingAside.decrementAndGet();
            return Mono.<Void>fromRunnable(() -> parkThrottled(item, domain, throttle)).subscribeOn(io);
        }
        Duration wait = throttle.pacer.reserve();
        limits.demand(throttle.share, wait);
        if (wait.isZero()) {
            waitingAside.decrementAndGet();
            return paced(item, domain);
        }
        Disposable waiting = Mono.delay(wait).then(Mono.defer(() -> {
                waitingAside.decrementAndGet();
                return paced(item, domain);
            }))
            .subscribe(ignored -> { }, e -> LOGGER.error("Lane {}: throttled mail to {} not sent", state.lane().name(), domain, e));
        aside.add(waiting);
        if (waiting.isDisposed()) { // already over: forget it (the sweep below forgets the others)
            aside.remove(waiting);
        }
        aside.removeIf(Disposable::isDisposed); // a finished subscription is disposed
        return Mono.empty();
    }

    /** Parks a throttled tail domain's mail in the delay tier covering one interval of its throttle. */
    private void parkThrottled(MailQueueItem item, String domain, DomainThrottles.Throttle throttle) {
        Mail mail = item.getMail();
        try {
            Duration interval = Duration.ofNanos((long) (1e9 / throttle.rate));
            state.delayed().add(delays.parkWhileSuspended(mail, interval));
            complete(item, MailQueueItem.CompletionStatus.SUCCESS);
        } catch (Exception e) {
            LOGGER.error("Lane {}: throttled mail {} to {} not parked; the queue hands it out again", state.lane().name(),
                mail.getName(), domain, e);
            complete(item, MailQueueItem.CompletionStatus.RETRY);
        }
    }

    /** The first recipient's domain (every recipient of a lane mail has it), or null when there is none. */
    private static String domainOf(MailQueueItem item) {
        Collection<MailAddress> recipients = item.getMail().getRecipients();
        return recipients.isEmpty() ? null : recipients.iterator().next().getDomain().asString();
    }

    /**
     * An idle connection to {@code domain} or a slot for a new one; while every slot of the lane is taken
     * (with shared limits, possibly by other nodes) it tries again every SLOT_WAIT, holding no thread.
     */
    private Mono<LaneConnections.Reservation> reserve(String domain) {
        if (domain == null) {
            return Mono.just(new LaneConnections.Reservation(null, null));
        }
        return Mono.fromCallable(() -> connections.reserve(domain, resolver)).subscribeOn(io)
            .repeatWhenEmpty(Integer.MAX_VALUE, tries -> tries.delayElements(SLOT_WAIT));
    }

    /**
     * Completes when the lane is no longer suspended, or the mail is ordered bounced; looks at least
     * every SUSPENSION_CHECK (an administrator's resume or bounce order). A loop (repeat), not a
     * recursion: a held mail's wait costs the same memory after an hour as after a second (each nested
     * {@code then} stayed alive until the end: about 150 bytes per held mail per check).
     */
    private Mono<Void> awaitResumption(MailQueueItem item) {
        return Mono.defer(() -> {
            Duration wait = state.suspension().remaining();
            if (wait.isZero() || bounceOrdered(item) != null) {
                return Mono.just(Boolean.TRUE);
            }
            state.stats().suspensionChecks.incrementAndGet();
            Duration nap = wait.compareTo(SUSPENSION_CHECK) < 0 ? wait.plusMillis(1) : SUSPENSION_CHECK;
            return Mono.delay(nap).then(Mono.<Boolean>empty());
        }).repeatWhenEmpty(Integer.MAX_VALUE, naps -> naps).then();
    }

    private java.time.Instant bounceOrdered(MailQueueItem item) {
        Collection<MailAddress> recipients = item.getMail().getRecipients();
        return recipients.isEmpty() ? null : state.bounces().activeFor(recipients.iterator().next().getDomain().asString());
    }

    /** Sends the mail to the bounce path under an administrator's order, then removes it from the lane. */
    private void bounceByOrder(MailQueueItem item) {
        Mail mail = item.getMail();
        try {
            Collection<MailAddress> to = mail.getRecipients();
            String why = to.isEmpty() ? "an administrator's order" : state.bounces().reasonFor(to.iterator().next().getDomain().asString());
            SmtpReply reply = SmtpReply.noReply("bounced by " + why + " until " + bounceOrdered(item));
            Mail bounced = copyFor(mail, mail.getRecipients(), "-bounce");
            bounced.setErrorMessage(reply.toString());
            bouncer.bounce(bounced, reply);
            state.stats().bounced.incrementAndGet();
            complete(item, MailQueueItem.CompletionStatus.SUCCESS);
            LifecycleUtil.dispose(mail);
        } catch (Exception e) {
            LOGGER.error("Lane {}: cannot bounce mail {} as ordered; the queue hands it out again", state.lane().name(), mail.getName(), e);
            complete(item, MailQueueItem.CompletionStatus.RETRY);
        }
    }

    /** Delivers one mail; returns what it says about the destination (for the adaptive limit). */
    private AdaptiveLimit.Feedback deliver(MailQueueItem item, String domain, LaneConnections.Reservation reservation) {
        Mail mail = item.getMail();
        LaneStats stats = state.stats();
        stats.inFlight.incrementAndGet();
        tailCounts.deliveryStarted(mail);
        boolean reservationUsed = false;
        try {
            List<MailAddress> recipients = new ArrayList<>(mail.getRecipients());
            if (domain == null) { // nothing to deliver (never enqueued so; a damaged mail must not loop)
                complete(item, MailQueueItem.CompletionStatus.SUCCESS);
                return AdaptiveLimit.Feedback.NOTHING;
            }
            SuspensionRule domainRule = state.suspensionOf(domain);
            Duration suspended = domainRule.remaining();
            if (!suspended.isZero()) { // a suspended tail domain of a bucket: parked, the bucket goes on
                state.delayed().add(delays.parkWhileSuspended(mail, suspended));
                complete(item, MailQueueItem.CompletionStatus.SUCCESS);
                return AdaptiveLimit.Feedback.NOTHING;
            }
            AdaptiveLimit.Feedback feedback = AdaptiveLimit.Feedback.GOT_THROUGH;
            TransactionResult result;
            try {
                reservationUsed = true;
                result = send(domain, mail, recipients, reservation);
            } catch (SmtpFailure failure) {
                stats.lastReply = failure.reply().toString();
                if (failure.reply().serviceNotAvailable() || failure.beforeGreeting()) {
                    feedback = AdaptiveLimit.Feedback.CONNECTION_FAILED;
                    stats.connectionFailures.incrementAndGet();
                    if (domainRule.recordFailure(failure.reply())) {
                        LOGGER.warn("Lane {} suspended for {}: {}", state.lane().name(), domain, domainRule.reason());
                    }
                }
                result = new TransactionResult(List.of(), recipients, List.of(), failure.reply());
            }
            // every negative reply, a RCPT refused in a transaction that delivered to others included
            for (SmtpReply negative : result.negativeReplies()) {
                applyReplyRules(domainRule, domain, negative);
            }
            settle(item, mail, result);
            return feedback;
        } catch (Exception e) {
            LOGGER.error("Lane {}: mail {} left for a later attempt", state.lane().name(), mail.getName(), e);
            complete(item, MailQueueItem.CompletionStatus.RETRY);
            return AdaptiveLimit.Feedback.NOTHING;
        } finally {
            if (!reservationUsed && domain != null) {
                connections.cancel(reservation, domain);
            }
            stats.inFlight.decrementAndGet();
            tailCounts.deliveryEnded(mail);
        }
    }

    /** The lane's rate (mails/s, 0 = no limit): maxMessageRate, capped by a reply rule's throttle of a dedicated lane while it lasts. */
    private double rate() {
        double throttled = state.stats().throttledRate(clock.millis());
        double configured = config.maxMessageRate();
        return throttled <= 0 ? configured : configured > 0 ? Math.min(configured, throttled) : throttled;
    }

    /** Counts {@code reply} for every configured reply rule it matches (each may suspend the destination). */
    private void applyReplyRules(SuspensionRule domainRule, String domain, SmtpReply reply) {
        for (ReplyRule rule : config.replyRules()) {
            if (!domainRule.recordMatch(rule, reply)) {
                continue;
            }
            String why = rule + " (" + rule.threshold() + " matching replies, last: " + reply + ")";
            if (rule.action() == ReplyRule.Action.THROTTLE) {
                throttle(domain, rule, why);
            } else if (rule.action() == ReplyRule.Action.BOUNCE) {
                state.bounces().order(domain, rule.suspendFor(), why);
                LOGGER.warn("Lane {}: mail to {} bounced for {} ms: {}", state.lane().name(), domain, rule.suspendFor().toMillis(), why);
            } else {
                LOGGER.warn("Lane {} suspended for {}: {}", state.lane().name(), domain, domainRule.reason());
            }
        }
    }

    /**
     * Applies a throttle rule to the destination whose replies matched: a dedicated lane's rate, or in a
     * bucket the tail domain alone (its own pacer; with shared limits its rate is shared by demand among
     * the nodes throttling it, as a lane's rate is: the throttle's share name is
     * {@code <lane>/throttle-<domain>}).
     */
    private void throttle(String domain, ReplyRule rule, String why) {
        long now = clock.millis();
        long until = now + rule.suspendFor().toMillis();
        if (state.lane().dedicated()) {
            state.stats().throttle(rule.rate(), until, why);
            LOGGER.warn("Lane {} paced at {}/s at most for {} ms (for {}): {}", state.lane().name(), rule.rate(),
                rule.suspendFor().toMillis(), domain, why);
            return;
        }
        Lane share = new Lane(state.lane().name() + "/throttle-" + domain.toLowerCase(java.util.Locale.ROOT), false);
        boolean applied = state.stats().domainThrottles.throttle(domain, rule.rate(), until, why, now, share,
            t -> new RatePacer(() -> t.rate * limits.rateShare(t.share), System::nanoTime));
        if (applied) {
            LOGGER.warn("Lane {}: {} paced at {}/s at most for {} ms (its bucket neighbours are not): {}", state.lane().name(),
                domain, rule.rate(), rule.suspendFor().toMillis(), why);
        } else {
            LOGGER.warn("Lane {}: {} not throttled: {} other domains of the bucket are throttled already: {}",
                state.lane().name(), domain, DomainThrottles.MAX_DOMAINS, why);
        }
    }

    private TransactionResult send(String domain, Mail mail, List<MailAddress> recipients,
                                   LaneConnections.Reservation reservation) throws Exception {
        LaneConnections.Connection connection = connections.open(reservation, domain, resolver);
        TransactionResult result;
        try {
            result = connection.session().send(mail.getMaybeSender().asString(""), recipients, mail.getMessage());
        } catch (SmtpFailure failure) {
            connections.discard(connection);
            throw failure;
        } catch (Exception | Error e) { // e.g. the message cannot be read: the connection may be mid-transaction
            connections.discard(connection);
            throw e;
        }
        connections.giveBack(domain, connection);
        state.stats().lastReply = String.valueOf(result.reply());
        return result;
    }

    /** Records the outcome, then removes the mail from the lane queue (after its retries and bounces are stored). */
    private void settle(MailQueueItem item, Mail mail, TransactionResult result) throws Exception {
        LaneStats stats = state.stats();
        stats.delivered.addAndGet(result.delivered().isEmpty() ? 0 : 1);
        int failures = Attempts.of(mail) + 1;
        List<MailAddress> bounce = new ArrayList<>(result.permanent());
        if (!result.temporary().isEmpty()) {
            if (failures >= config.maxAttempts()) {
                bounce.addAll(result.temporary());
            } else {
                Mail retry = copyFor(mail, result.temporary(), "-retry" + failures);
                Attempts.set(retry, failures);
                state.delayed().add(delays.park(retry, failures));
                LifecycleUtil.dispose(retry);
                stats.deferred.incrementAndGet();
            }
        }
        // one bounce per distinct reply: each recipient's bounce says what the server answered for it
        Map<SmtpReply, List<MailAddress>> bounceByReply = new LinkedHashMap<>();
        bounce.forEach(recipient -> bounceByReply.computeIfAbsent(result.replyFor(recipient), r -> new ArrayList<>()).add(recipient));
        int part = 0;
        for (Map.Entry<SmtpReply, List<MailAddress>> group : bounceByReply.entrySet()) {
            Mail bounced = copyFor(mail, group.getValue(), part++ == 0 ? "-bounce" : "-bounce" + part);
            bounced.setErrorMessage(String.valueOf(group.getKey()));
            bouncer.bounce(bounced, group.getKey());
        }
        if (!bounce.isEmpty()) {
            stats.bounced.incrementAndGet();
        }
        complete(item, MailQueueItem.CompletionStatus.SUCCESS);
        LifecycleUtil.dispose(mail);
    }

    private static Mail copyFor(Mail mail, Collection<MailAddress> recipients, String suffix) throws Exception {
        MailImpl copy = MailImpl.duplicate(mail);
        copy.setName(baseName(mail.getName()) + suffix);
        copy.setRecipients(recipients);
        return copy;
    }

    /** The name without an earlier retry suffix, so names do not grow with every attempt. */
    private static String baseName(String name) {
        int retry = name.lastIndexOf("-retry");
        return retry > 0 ? name.substring(0, retry) : name;
    }

    private void complete(MailQueueItem item, MailQueueItem.CompletionStatus status) {
        try {
            item.done(status);
            if (status == MailQueueItem.CompletionStatus.SUCCESS) {
                tailCounts.leftLane(item.getMail());
            }
        } catch (Exception e) {
            LOGGER.error("Lane {}: cannot complete mail {} ({}); the queue hands it out again", state.lane().name(),
                item.getMail().getName(), status, e);
        }
    }

    @Override
    public void close() {
        if (subscription != null) {
            subscription.dispose();
        }
        aside.forEach(Disposable::dispose); // their mails are not done: the queue hands them out again at the next start
        connections.close();
    }
}
