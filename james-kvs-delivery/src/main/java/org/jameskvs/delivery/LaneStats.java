package org.jameskvs.delivery;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A lane's counters on this node (what the admin route shows besides the queue size). */
public final class LaneStats {
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger openConnections = new AtomicInteger();
    final AtomicInteger maxOpenConnections = new AtomicInteger();
    final AtomicLong connectionsOpened = new AtomicLong();
    final AtomicLong delivered = new AtomicLong();
    final AtomicLong deferred = new AtomicLong();
    final AtomicLong bounced = new AtomicLong();
    final AtomicLong connectionFailures = new AtomicLong();
    volatile String lastReply = "";
    volatile java.util.function.IntSupplier currentLimit = () -> 0;

    void connectionOpened() {
        connectionsOpened.incrementAndGet();
        int open = openConnections.incrementAndGet();
        maxOpenConnections.accumulateAndGet(open, Math::max);
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
