package org.jameskvs.server.storage;

/**
 * The transactions of a queue whose effect may be missing because journal records were lost:
 * {@code [fromTxn, toTxn]}, {@code toTxn = } {@link #UNKNOWN_END} when the end could not be told
 * (damage that could not be attributed to a record). A lost mutation is the one transaction it
 * carried; a lost compaction copy or queue checkpoint is every transaction up to it (the message
 * it held was put at some earlier one).
 */
public record QueueDamage(long fromTxn, long toTxn) {
    public static final long UNKNOWN_END = Long.MAX_VALUE;
    public static final QueueDamage NONE = new QueueDamage(0, 0);

    public boolean isDamaged() {
        return fromTxn > 0;
    }

    /** The smallest range covering both. */
    QueueDamage union(QueueDamage other) {
        if (!other.isDamaged()) {
            return this;
        }
        if (!isDamaged()) {
            return other;
        }
        return new QueueDamage(Math.min(fromTxn, other.fromTxn), Math.max(toTxn, other.toTxn));
    }

    boolean covers(QueueDamage other) {
        return !other.isDamaged() || isDamaged() && fromTxn <= other.fromTxn && toTxn >= other.toTxn;
    }

    /** "transactions 6..6", "transactions 1..40", "transactions from 12 on (end unknown)". */
    public String describe() {
        if (!isDamaged()) {
            return "intact";
        }
        return toTxn == UNKNOWN_END ? "transactions from " + fromTxn + " on (end unknown)"
                : "transactions " + fromTxn + ".." + toTxn;
    }
}
