package org.jameskvs.delivery;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Everything known about one lane on this node: its queue size, counters, delayed counts, the lane's
 * suspension, and, in a bucket, each tail domain's own suspension (so that one failing tail domain
 * does not suspend the others sharing its bucket). A dedicated lane's domain suspension is the lane's.
 * Also the administrator's bounce orders on the lane or its domains.
 */
public record LaneState(Lane lane, int concurrency, LongSupplier queueSize, LaneStats stats, DelayedCounts delayed,
                        SuspensionRule suspension, Supplier<SuspensionRule> newRule,
                        Map<String, SuspensionRule> domainSuspensions, BounceOrders bounces) {

    public LaneState(Lane lane, int concurrency, LongSupplier queueSize, LaneStats stats, DelayedCounts delayed,
                     Supplier<SuspensionRule> newRule, BounceOrders bounces) {
        this(lane, concurrency, queueSize, stats, delayed, newRule.get(), newRule, new ConcurrentHashMap<>(), bounces);
    }

    /** The suspension rule of {@code domain}'s mail in this lane. */
    public SuspensionRule suspensionOf(String domain) {
        if (lane.dedicated()) {
            return suspension;
        }
        return domainSuspensions.computeIfAbsent(domain.toLowerCase(Locale.ROOT), d -> newRule.get());
    }

    /** Tail domains of this bucket suspended now, with when their suspension ends. */
    public Map<String, String> suspendedDomains() {
        Map<String, String> suspended = new TreeMap<>();
        domainSuspensions.forEach((domain, rule) -> {
            java.time.Instant until = rule.suspendedUntil();
            if (until != null) {
                suspended.put(domain, until.toString());
            }
        });
        return suspended;
    }
}
