package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.james.core.MailAddress;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.server.core.MailImpl;
import org.apache.mailet.Mail;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The lanes at work: one mail queue per lane (from James's queue factory, so KVS queues when James runs
 * with the plug-in), one {@link LaneWorker} per lane, the {@link DelayTiers} its retries wait in, a
 * shared pool of I/O threads, and the split of an
 * outgoing mail into one mail per recipient domain, each enqueued in its domain's lane.
 */
public final class LaneSpool implements AutoCloseable {
    /** Tail domains whose MX group is remembered (mxGrouping), and for how long. */
    private static final int MX_GROUPS_REMEMBERED = 100_000;
    private static final Duration MX_GROUP_TTL = Duration.ofHours(1);
    private final LaneDeliveryConfig config;
    private final LaneRouter router;
    private final Map<String, MailQueue> queues = new LinkedHashMap<>();
    private final List<LaneWorker> workers = new ArrayList<>();
    private final Scheduler io;
    private final DelayTiers delays;
    private final Disposable idleCloser;
    private final SharedLimits limits;
    private final TailDomainCounts tailCounts = new TailDomainCounts(TailDomainCounts.MAX_DOMAINS);

    public LaneSpool(LaneDeliveryConfig config, MailQueueFactory<?> queueFactory, MxResolver resolver,
                     Bouncer bouncer, LaneRegistry registry, Clock clock) {
        this(config, queueFactory, resolver, bouncer, registry, clock, SharedLimits.nodeLocal());
    }

    /** With {@code limits} shared with other nodes (closed with this spool). */
    public LaneSpool(LaneDeliveryConfig config, MailQueueFactory<?> queueFactory, MxResolver resolver,
                     Bouncer bouncer, LaneRegistry registry, Clock clock, SharedLimits limits) {
        resolver = GatewayResolver.forConfig(config, resolver); // gateway mode: every lane delivers to the gateway
        this.config = config;
        this.limits = limits;
        this.router = config.mxGrouping()
            ? new LaneRouter(config, new MxGroups(resolver::mxGroup, MX_GROUPS_REMEMBERED, MX_GROUP_TTL, clock))
            : new LaneRouter(config);
        this.io = Schedulers.newBoundedElastic(config.deliveryThreads(), Integer.MAX_VALUE, "lane-delivery");
        this.delays = new DelayTiers(config, queueFactory, clock, tailCounts);
        List<LaneState> states = new ArrayList<>();
        for (Lane lane : router.lanes()) {
            MailQueue queue = queueFactory.createQueue(lane.queueName());
            queues.put(lane.name(), queue);
            LaneState state = new LaneState(lane, config.concurrency(), () -> sizeOf(queue), new LaneStats(),
                new DelayedCounts(clock),
                () -> new SuspensionRule(config.suspendAfterFailures(), config.suspendWindow(), config.suspendFor(), clock),
                new BounceOrders(clock));
            states.add(state);
            workers.add(new LaneWorker(state, queue, resolver, config, bouncer, io, clock, delays, limits, tailCounts));
        }
        registry.register(router, states, tailCounts);
        workers.forEach(LaneWorker::start);
        delays.start(this::queueOf, io);
        this.idleCloser = Flux.interval(Duration.ofSeconds(1), io)
            .subscribe(tick -> workers.forEach(LaneWorker::closeIdleConnections));
    }

    /**
     * Puts {@code mail} into the lanes of its recipients' domains: the mail itself when it has one
     * domain, else one copy per domain (named after the mail and the domain). Returns once every part is
     * stored; throws if one could not be (the caller's mail is then not consumed).
     */
    public void enqueue(Mail mail) throws Exception {
        Map<String, List<MailAddress>> byDomain = new LinkedHashMap<>();
        for (MailAddress recipient : mail.getRecipients()) {
            byDomain.computeIfAbsent(recipient.getDomain().asString().toLowerCase(java.util.Locale.ROOT), d -> new ArrayList<>())
                .add(recipient);
        }
        if (byDomain.size() == 1) {
            store(byDomain.keySet().iterator().next(), mail);
            return;
        }
        for (Map.Entry<String, List<MailAddress>> domain : byDomain.entrySet()) {
            MailImpl part = MailImpl.duplicate(mail);
            part.setName(mail.getName() + "-" + domain.getKey());
            part.setRecipients(domain.getValue());
            store(domain.getKey(), part);
        }
    }

    /** Stores {@code mail} (every recipient in {@code domain}) in its lane; a tail domain's counts count it. */
    private void store(String domain, Mail mail) throws Exception {
        boolean counted = !router.laneOf(domain).dedicated() && tailCounts.enqueuing(domain, mail);
        try {
            queueOf(domain).enQueue(mail);
        } catch (Exception | Error e) {
            if (counted) {
                tailCounts.enqueueFailed(mail);
            }
            throw e;
        }
    }

    /** The tail domains' own counts on this node. */
    public TailDomainCounts tailCounts() {
        return tailCounts;
    }

    private MailQueue queueOf(String domain) {
        return queues.get(router.laneOf(domain).name());
    }

    public LaneRouter router() {
        return router;
    }

    /** The lane queues (not the delay tiers). */
    public Collection<MailQueue> queues() {
        return queues.values();
    }

    /** The delay tier queues, one per retry delay. */
    public List<MailQueue> delayQueues() {
        return delays.queues();
    }

    private static long sizeOf(MailQueue queue) {
        if (!(queue instanceof ManageableMailQueue manageable)) {
            return -1;
        }
        try {
            return manageable.getSize();
        } catch (Exception e) {
            return -1;
        }
    }

    @Override
    public void close() {
        idleCloser.dispose();
        delays.close();
        workers.forEach(LaneWorker::close);
        limits.close();
        io.dispose();
    }
}
