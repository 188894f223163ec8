package org.jameskvs.delivery;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A lane's counters on this node (what the admin route shows besides the queue size). */
public final class LaneStats {
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger held = new AtomicInteger();
    /** Times a held mail looked whether the lane's suspension is over (a timer event each). */
    final AtomicLong suspensionChecks = new AtomicLong();
    final AtomicInteger openConnections = new AtomicInteger();
    final AtomicInteger maxOpenConnections = new AtomicInteger();
    final AtomicLong connectionsOpened = new AtomicLong();
    final AtomicLong connectionsShared = new AtomicLong();
    final AtomicLong delivered = new AtomicLong();
    final AtomicLong deferred = new AtomicLong();
    final AtomicLong bounced = new AtomicLong();
    final AtomicLong connectionFailures = new AtomicLong();
    volatile String lastReply = "";
    volatile java.util.function.IntSupplier currentLimit = () -> 0;
    /** A reply rule's throttle: the lane's rate cap (mails/s, 0 = none) until when (epoch ms), and why. */
    private volatile Throttle throttle = new Throttle(0, 0, "");

    /** The tail domains' own throttles (a bucket's). */
    final DomainThrottles domainThrottles = new DomainThrottles();

    private record Throttle(double rate, long untilMillis, String reason) {
    }

    /** The tail domains of this bucket throttled at {@code nowMillis}, each with "rate/s until end". */
    public java.util.Map<String, String> throttledDomains(long nowMillis) {
        return domainThrottles.active(nowMillis);
    }

    /** Caps the lane's rate at {@code rate} mails/s until {@code untilMillis} (a reply rule's throttle of a dedicated lane). */
    void throttle(double rate, long untilMillis, String reason) {
        throttle = new Throttle(rate, untilMillis, reason);
    }

    /** The rate cap of a throttle active at {@code nowMillis}, or 0 when none is. */
    public double throttledRate(long nowMillis) {
        Throttle now = throttle;
        return nowMillis < now.untilMillis() ? now.rate() : 0;
    }

    /** When the active throttle ends (epoch ms), or 0. */
    public long throttledUntil(long nowMillis) {
        Throttle now = throttle;
        return nowMillis < now.untilMillis() ? now.untilMillis() : 0;
    }

    void connectionOpened() {
        connectionsOpened.incrementAndGet();
        int open = openConnections.incrementAndGet();
        maxOpenConnections.accumulateAndGet(open, Math::max);
    }

    /** An idle connection to one domain took a mail to another domain with the same MX address. */
    void connectionShared() {
        connectionsShared.incrementAndGet();
    }

    void connectionClosed() {
        openConnections.decrementAndGet();
    }

    public int inFlight() {
        return inFlight.get();
    }

    /** Mails taken from the lane queue that wait for the lane's suspension to end (at most its concurrency). */
    public int held() {
        return held.get();
    }

    /**
     * Times the mails held by the lane's suspension looked whether it is over: the timer events a
     * suspended lane costs this node (at most its concurrency per SUSPENSION_CHECK, whatever it holds).
     */
    public long suspensionChecks() {
        return suspensionChecks.get();
    }

    public int openConnections() {
        return openConnections.get();
    }

    /** The most connections this lane had open at once on this node. */
    public int maxOpenConnections() {
        return maxOpenConnections.get();
    }

    public long connectionsOpened() {
        return connectionsOpened.get();
    }

    /** Times a kept connection served another domain of the same MX address (see {@code LaneConnections}). */
    public long connectionsShared() {
        return connectionsShared.get();
    }

    public long delivered() {
        return delivered.get();
    }

    public long deferred() {
        return deferred.get();
    }

    public long bounced() {
        return bounced.get();
    }

    public long connectionFailures() {
        return connectionFailures.get();
    }

    /** The lane's concurrency limit now (slow start and back-off), at most its configured concurrency. */
    public int currentLimit() {
        return currentLimit.getAsInt();
    }

    public String lastReply() {
        return lastReply;
    }
}
