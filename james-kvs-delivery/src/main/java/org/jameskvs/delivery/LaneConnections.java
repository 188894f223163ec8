package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;

/**
 * A lane's open SMTP connections, kept between mails so that several mails share one connection. At
 * most {@code concurrency} connections exist at once on this node (the lane's deliveries are bounded
 * by the same number, and a connection to another domain of a bucket is closed before one more is
 * opened), and each holds a {@link SharedLimits.Slot}, so with shared limits at most
 * {@code concurrency} exist across the nodes. A connection idle longer than {@code idleConnection},
 * past {@code maxDeliveriesPerConnection}, or whose slot may be lost, is closed.
 *
 * <p>An idle connection serves the next mail to its own domain, or to another domain whose best MX
 * address is the one it is connected to (where a new connection for that domain would go): domains
 * that share an MX host, grouped in one lane by {@code mxGrouping} or sharing a bucket, share its
 * connections. SMTP allows it: every transaction names its own sender and recipients.
 */
final class LaneConnections implements AutoCloseable {
    /** An open connection and the slot it holds. */
    record Connection(SmtpSession session, SharedLimits.Slot slot) {
    }

    /**
     * The right to deliver one mail: an idle connection to the domain, else a slot to open one with.
     * Taken by {@link #reserve}, used by {@link #open}, or given back by {@link #cancel}.
     */
    record Reservation(Connection idle, SharedLimits.Slot slot) {
    }

    private record Idle(String domain, Connection connection, Instant since) {
    }

    private final Lane lane;
    private final LaneDeliveryConfig config;
    private final SharedLimits limits;
    private final LaneStats stats;
    private final Clock clock;
    private final Deque<Idle> idle = new ArrayDeque<>();
    /** Connections open or reserved to be opened. */
    private int open;
    private boolean closed;

    LaneConnections(Lane lane, LaneDeliveryConfig config, SharedLimits limits, LaneStats stats, Clock clock) {
        this.lane = lane;
        this.config = config;
        this.limits = limits;
        this.stats = stats;
        this.clock = clock;
    }

    /**
     * An idle connection to {@code domain}, else a slot for a new one (an idle connection to another
     * domain of the bucket gives its slot up when this node is at its bound), else null: every slot is
     * taken, by this node or another. May wait for a round trip to the KVS: called on an I/O thread.
     */
    Reservation reserve(String domain, MxResolver resolver) {
        Idle victim = null;
        boolean otherDomainsIdle = false;
        synchronized (this) {
            closeExpired();
            for (Iterator<Idle> it = idle.iterator(); it.hasNext(); ) {
                Idle candidate = it.next();
                if (candidate.domain().equals(domain)) {
                    it.remove();
                    return new Reservation(candidate.connection(), null);
                }
                otherDomainsIdle = true;
            }
        }
        if (otherDomainsIdle) {
            Reservation shared = idleToSameMx(domain, resolver);
            if (shared != null) {
                return shared;
            }
        }
        synchronized (this) {
            if (open >= config.concurrency()) {
                if (idle.isEmpty()) {
                    return null;
                }
                victim = idle.removeLast(); // room for a connection to this domain; its slot passes on
            } else {
                open++;
            }
        }
        if (victim != null) {
            victim.connection().session().close(); // QUIT waits for the 221 before the new connection is opened
            stats.connectionClosed();
            return new Reservation(null, victim.connection().slot());
        }
        SharedLimits.Slot slot = limits.tryTake(lane, config.concurrency());
        if (slot == null) {
            synchronized (this) {
                open--;
            }
        }
        return slot == null ? null : new Reservation(null, slot);
    }

    /**
     * An idle connection to another domain that is connected to {@code domain}'s best MX address,
     * taken; null when there is none or the domain cannot be resolved now (the lookup is made outside
     * the lock: it may wait for DNS).
     */
    private Reservation idleToSameMx(String domain, MxResolver resolver) {
        java.net.InetSocketAddress best;
        try {
            List<java.net.InetSocketAddress> addresses = resolver.targets(domain, config.port());
            if (addresses.isEmpty()) {
                return null;
            }
            best = addresses.get(0);
        } catch (SmtpFailure | RuntimeException e) {
            return null; // a new connection's attempt will report it
        }
        synchronized (this) {
            for (Iterator<Idle> it = idle.iterator(); it.hasNext(); ) {
                Idle candidate = it.next();
                if (best.equals(candidate.connection().session().remoteSocketAddress())) {
                    it.remove();
                    stats.connectionShared();
                    return new Reservation(candidate.connection(), null);
                }
            }
        }
        return null;
    }

    /** The reserved idle connection, else a new connection to {@code domain}'s MX on the reserved slot. */
    Connection open(Reservation reservation, String domain, MxResolver resolver) throws SmtpFailure {
        if (reservation.idle() != null) {
            return reservation.idle();
        }
        try {
            SmtpSession session = SmtpSession.open(resolver.targets(domain, config.port()), config);
            stats.connectionOpened();
            return new Connection(session, reservation.slot());
        } catch (SmtpFailure | RuntimeException e) {
            cancel(reservation, domain);
            throw e;
        }
    }

    /** Gives back a reservation for {@code domain} that was not used. */
    void cancel(Reservation reservation, String domain) {
        if (reservation.idle() != null) {
            giveBack(domain, reservation.idle());
            return;
        }
        reservation.slot().release();
        synchronized (this) {
            open--;
        }
    }

    /** Gives a connection back after a transaction: kept for the next mail, or closed. */
    void giveBack(String domain, Connection connection) {
        SmtpSession session = connection.session();
        if (session.isOpen() && session.transactions() < config.maxDeliveriesPerConnection()
                && connection.slot().held()) {
            synchronized (this) {
                if (!closed) {
                    idle.addFirst(new Idle(domain, connection, clock.instant()));
                    return;
                }
            }
        }
        discard(connection);
    }

    /** Closes a connection that broke or is not wanted any more, and frees its slot. */
    void discard(Connection connection) {
        connection.session().close();
        connection.slot().release();
        synchronized (this) {
            open--;
        }
        stats.connectionClosed();
    }

    /** Closes idle connections past their idle time (called by every reserve and periodically). */
    synchronized void closeExpired() {
        Instant limit = clock.instant().minus(config.idleConnection());
        while (!idle.isEmpty() && idle.peekLast().since().isBefore(limit)) {
            closeIdle(idle.removeLast());
        }
    }

    private void closeIdle(Idle expired) {
        expired.connection().session().close();
        expired.connection().slot().release();
        open--;
        stats.connectionClosed();
    }

    @Override
    public synchronized void close() {
        closed = true;
        while (!idle.isEmpty()) {
            closeIdle(idle.removeFirst());
        }
    }
}
