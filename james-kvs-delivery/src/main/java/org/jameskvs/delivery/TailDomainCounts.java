package org.jameskvs.delivery;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.james.core.MailAddress;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.Mail;

/**
 * A tail domain's own counts inside its bucket (a bucket's queue counts every domain hashed to it):
 * queued (in the bucket's queue, in delivery included), delayed (waiting in a delay tier) and in
 * delivery, kept as counters as the mail moves, never by reading mail.
 *
 * <p><b>Per James node</b>: a node counts the mail it put into a bucket itself since it started, as
 * long as that mail is handled by this node (it marks each mail it counts with its own random id, the
 * attribute COUNTED_BY, and counts a mail's later moves only when it carries that id). Mail queued by
 * another node or before a restart is not in the counts; with several nodes on one KVS cluster a
 * domain's counts are the sum over the nodes only where each node delivers what it queued.
 *
 * <p><b>Bounded</b>: at most {@code maxDomains} (LaneSpool: {@link #MAX_DOMAINS}) domains with mail are
 * counted at once (about 150 bytes each); a domain is forgotten when its counts are all back to 0.
 * While the bound is reached, mail to a domain not yet counted is not counted, and that domain's
 * answer says so ({@link View#counted()} false, {@link View#note()}).
 */
public final class TailDomainCounts {
    /** Tail domains with mail counted at once by LaneSpool. */
    public static final int MAX_DOMAINS = 100_000;
    /** The id of the node that counts the mail (absent: not counted). */
    static final AttributeName COUNTED_BY = AttributeName.of("org.jameskvs.delivery.tailCountedBy");

    /** One tail domain's counts as {@code GET /lanes/{domain}} shows them (the {@code domain} field). */
    public record View(String domain, boolean counted, long queued, long delayed, long inFlight, String note) {
    }

    /** Changed only inside the map's compute for its domain (one at a time per domain). */
    private static final class Counts {
        long queued;
        long delayed;
        long inFlight;

        boolean empty() {
            return queued <= 0 && delayed <= 0 && inFlight <= 0;
        }
    }

    private final String node = UUID.randomUUID().toString();
    private final int maxDomains;
    private final Map<String, Counts> counts = new ConcurrentHashMap<>();
    private final AtomicInteger domains = new AtomicInteger();
    private final AtomicLong notCounted = new AtomicLong();

    public TailDomainCounts(int maxDomains) {
        this.maxDomains = maxDomains;
    }

    /**
     * Before {@code mail} (every recipient in {@code domain}) is stored in its bucket: counts it as queued
     * and marks it as counted by this node, unless the bound is reached. Returns whether it was counted.
     */
    boolean enqueuing(String domain, Mail mail) {
        boolean[] counted = {false};
        counts.compute(key(domain), (d, c) -> {
            if (c == null) {
                if (domains.get() >= maxDomains) {
                    return null;
                }
                domains.incrementAndGet();
                c = new Counts();
            }
            synchronized (c) {
                c.queued++;
            }
            counted[0] = true;
            return c;
        });
        if (counted[0]) {
            mail.setAttribute(new Attribute(COUNTED_BY, AttributeValue.of(node)));
        } else {
            notCounted.incrementAndGet();
        }
        return counted[0];
    }

    /** The store of a mail {@link #enqueuing} counted failed: it is not queued. */
    void enqueueFailed(Mail mail) {
        change(mail, c -> c.queued--);
        mail.removeAttribute(COUNTED_BY);
    }

    /** A counted mail was taken for delivery (until {@link #deliveryEnded}). */
    void deliveryStarted(Mail mail) {
        change(mail, c -> c.inFlight++);
    }

    void deliveryEnded(Mail mail) {
        change(mail, c -> c.inFlight--);
    }

    /** A counted mail (or its retry copy) is stored in a delay tier. */
    void parked(Mail mail) {
        change(mail, c -> c.delayed++);
    }

    /** A counted mail left its delay tier for its bucket again. */
    void movedBack(Mail mail) {
        change(mail, c -> {
            c.delayed--;
            c.queued++;
        });
    }

    /** A counted mail left its bucket's queue (delivered, bounced or parked). */
    void leftLane(Mail mail) {
        change(mail, c -> c.queued--);
    }

    /** {@code domain}'s counts on this node. */
    public View view(String domain) {
        String key = key(domain);
        Counts c = counts.get(key);
        if (c != null) {
            synchronized (c) {
                return new View(key, true, Math.max(0, c.queued), Math.max(0, c.delayed), Math.max(0, c.inFlight), null);
            }
        }
        if (domains.get() >= maxDomains) {
            return new View(key, false, 0, 0, 0, String.format(Locale.ROOT, "not counted: this node counts at most %,d tail"
                + " domains with mail at once and has that many (%,d mails not counted since it started)", maxDomains, notCounted.get()));
        }
        return new View(key, true, 0, 0, 0, null);
    }

    /** Tail domains counted now. */
    public int domains() {
        return domains.get();
    }

    private interface Change {
        void apply(Counts counts);
    }

    private void change(Mail mail, Change change) {
        String domain = countedDomain(mail);
        if (domain == null) {
            return;
        }
        counts.computeIfPresent(domain, (d, c) -> {
            synchronized (c) { // view() reads the three counts together
                change.apply(c);
            }
            if (c.empty()) {
                domains.decrementAndGet();
                return null;
            }
            return c;
        });
    }

    /** The domain of a mail this node counted, else null. */
    private String countedDomain(Mail mail) {
        boolean ours = mail.getAttribute(COUNTED_BY).map(a -> node.equals(a.getValue().value())).orElse(false);
        if (!ours) {
            return null;
        }
        Collection<MailAddress> recipients = mail.getRecipients();
        return recipients.isEmpty() ? null : key(recipients.iterator().next().getDomain().asString());
    }

    private static String key(String domain) {
        return domain.toLowerCase(Locale.ROOT);
    }
}
