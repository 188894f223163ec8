package org.jameskvs.delivery;

import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One lane as the admin route shows it, built from counters only (no mail is read): {@code queued} is
 * the lane queue's size (the KVS server's count: ready, delayed and in delivery), {@code delayed} the
 * mails this node put back with a delay that is not over, {@code inFlight} those in delivery, {@code held}
 * those taken from the queue that wait for the lane's suspension to end, {@code ready} what remains;
 * {@code suspendedDomains}: the tail domains of a bucket suspended on their own, with their end;
 * {@code bounceOrders}: active bounce orders (a domain, or {@code *} for the whole lane) and their end;
 * {@code throttledRate}: the rate cap (mails/s) of a reply rule's throttle of the lane (a dedicated lane's
 * domain) until {@code throttledUntil}, 0 when none; {@code throttledDomains}: the tail domains of a bucket
 * throttled on their own (each paced alone, its neighbours not), with their rate and end;
 * {@code domain}: only in the answer for a tail domain ({@code GET /lanes/{domain}} of a domain in a bucket):
 * that domain's own queued, delayed and in-flight counts on this node ({@link TailDomainCounts}), while the
 * other fields are its bucket's.
 */
public record LaneView(String lane, boolean dedicated, long queued, long ready, long delayed, int inFlight, int held,
                       int concurrency, int currentLimit, int openConnections, int maxOpenConnections, long connectionsOpened,
                       long delivered, long deferred, long bounced, long connectionFailures, String lastReply,
                       boolean suspended, String suspendedUntil, String suspensionReason, long suspensions,
                       java.util.Map<String, String> suspendedDomains, java.util.Map<String, String> bounceOrders,
                       double throttledRate, String throttledUntil, java.util.Map<String, String> throttledDomains,
                       @JsonInclude(JsonInclude.Include.NON_NULL) TailDomainCounts.View domain) {

    /** This view with {@code domain}'s own counts (a tail domain of this bucket). */
    public LaneView withDomain(TailDomainCounts.View domain) {
        return new LaneView(lane, dedicated, queued, ready, delayed, inFlight, held, concurrency, currentLimit, openConnections,
            maxOpenConnections, connectionsOpened, delivered, deferred, bounced, connectionFailures, lastReply, suspended,
            suspendedUntil, suspensionReason, suspensions, suspendedDomains, bounceOrders, throttledRate, throttledUntil, throttledDomains, domain);
    }

    public static LaneView of(LaneState state) {
        LaneStats stats = state.stats();
        long queued = state.queueSize().getAsLong();
        long delayed = state.delayed().pending();
        int inFlight = stats.inFlight() + stats.held();
        Instant until = state.suspension().suspendedUntil();
        return new LaneView(state.lane().name(), state.lane().dedicated(), queued,
            queued < 0 ? -1 : Math.max(0, queued - delayed - inFlight), delayed, stats.inFlight(), stats.held(), state.concurrency(), stats.currentLimit(),
            stats.openConnections(), stats.maxOpenConnections(), stats.connectionsOpened(), stats.delivered(),
            stats.deferred(), stats.bounced(), stats.connectionFailures(), stats.lastReply(), until != null,
            until == null ? null : until.toString(), state.suspension().reason(), state.suspension().suspensions(),
            state.suspendedDomains(), state.bounces().active(), stats.throttledRate(System.currentTimeMillis()),
            stats.throttledUntil(System.currentTimeMillis()) == 0 ? null
                : Instant.ofEpochMilli(stats.throttledUntil(System.currentTimeMillis())).toString(),
            stats.throttledDomains(System.currentTimeMillis()), null);
    }
}
