package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;

/**
 * A lane's open SMTP connections, kept between mails so that several mails share one connection. At
 * most {@code concurrency} connections exist at once (the lane's deliveries are bounded by the same
 * number, and a connection to another domain of a bucket is closed before one more is opened).
 * A connection idle longer than {@code idleConnection}, or past {@code maxDeliveriesPerConnection}, is
 * closed.
 */
final class LaneConnections implements AutoCloseable {
    private record Idle(String domain, SmtpSession session, Instant since) {
    }

    private final LaneDeliveryConfig config;
    private final LaneStats stats;
    private final Clock clock;
    private final Deque<Idle> idle = new ArrayDeque<>();
    private int open;
    private boolean closed;

    LaneConnections(LaneDeliveryConfig config, LaneStats stats, Clock clock) {
        this.config = config;
        this.stats = stats;
        this.clock = clock;
    }

    /** An open connection to {@code domain}'s MX: an idle one, else a new one. */
    SmtpSession borrow(String domain, MxResolver resolver) throws SmtpFailure {
        SmtpSession victim = null;
        synchronized (this) {
            closeExpired();
            for (Iterator<Idle> it = idle.iterator(); it.hasNext(); ) {
                Idle candidate = it.next();
                if (candidate.domain().equals(domain)) {
                    it.remove();
                    return candidate.session();
                }
            }
            if (open >= config.concurrency() && !idle.isEmpty()) {
                victim = idle.removeLast().session(); // room for a connection to this domain
            }
            open++;
        }
        if (victim != null) {
            discard(victim); // QUIT waits for the 221 before the new connection is opened
        }
        try {
            List<java.net.InetAddress> addresses = resolver.resolve(domain);
            SmtpSession session = SmtpSession.open(addresses, config.port(), config);
            stats.connectionOpened();
            return session;
        } catch (SmtpFailure | RuntimeException e) {
            synchronized (this) {
                open--;
            }
            throw e;
        }
    }

    /** Gives a connection back after a transaction: kept for the next mail, or closed. */
    void giveBack(String domain, SmtpSession session) {
        synchronized (this) {
            if (!closed && session.isOpen() && session.transactions() < config.maxDeliveriesPerConnection()) {
                idle.addFirst(new Idle(domain, session, clock.instant()));
                return;
            }
        }
        discard(session);
    }

    /** Closes a connection that broke or is not wanted any more. */
    void discard(SmtpSession session) {
        session.close();
        synchronized (this) {
            open--;
        }
        stats.connectionClosed();
    }

    /** Closes idle connections past their idle time (called by every borrow and periodically). */
    synchronized void closeExpired() {
        Instant limit = clock.instant().minus(config.idleConnection());
        while (!idle.isEmpty() && idle.peekLast().since().isBefore(limit)) {
            Idle expired = idle.removeLast();
            expired.session().close();
            open--;
            stats.connectionClosed();
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        while (!idle.isEmpty()) {
            idle.removeFirst().session().close();
            open--;
            stats.connectionClosed();
        }
    }
}
