package org.jameskvs.server.storage;

/**
 * Read-only view of one queue's metadata, owned by {@link QueueStore}. Confined to the store's
 * thread.
 */
public interface QueueState {
    String name();

    /** Mutations applied to this queue since it was created (put, delete, replace, clear, owner change). */
    long txn();

    /**
     * Data mutations (put, delete, replace, clear) this copy applied, counted from the queue's
     * creation (or the value a rebuild's REBASE set); owner changes do not count. With
     * {@link #digest()}: two copies are equal iff both are equal (see {@link QueueDigest}).
     */
    long lastSeq();

    /** Rolling digest over every data mutation applied, in order (see {@link QueueDigest}). */
    long digest();

    /**
     * The commit point its writer declared (the highest seq held by both copies of the queue, at most
     * {@link #lastSeq()}), or -1 when none was: READ and GET on a read handle show no message whose
     * position is above it (see {@link QueueStore#visibleLimit}).
     */
    default long committed() {
        return -1;
    }

    long size();

    /**
     * Live messages that are the user's: {@link #size()} less the system records (ids starting with a
     * zero byte: the replication layer's membership record). What metrics and LIST report.
     */
    long userSize();

    /** Sum of live body bytes. */
    long bytes();

    /** Position of the oldest live message, or {@link #nextPosition()} when empty. */
    long firstPosition();

    /** Position the next PUT will get. */
    long nextPosition();

    /** Smallest notBefore &gt; 0 among live messages (0 means "ready at once", not delayed), Long.MAX_VALUE when none. */
    long earliestNotBefore();

    long epoch();

    String owner();

    long maxMessages();

    long maxBytes();

    /**
     * True when recovery found that records of this queue were lost or damaged in the journal, so its
     * contents may lack acknowledged messages or hold deleted ones (see the crash contract in
     * {@link QueueStore}). Stays true, across restarts, until the queue is cleared or dropped.
     */
    boolean damaged();

    /** Which transactions may be missing ({@link QueueDamage#NONE} when not damaged). */
    QueueDamage damage();
}
