package org.jameskvs.client;

import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Status;

/**
 * Outcome of a STAT. {@code earliestNotBefore} is Long.MAX_VALUE when no live message is delayed;
 * {@code flags} are the server's queue flags ({@link QueueFlags}; 0 from a server that does not send them);
 * {@code lastSeq} and {@code digest} identify the copy's content (see the protocol's package doc);
 * {@code store} names the server's store that holds it (0: unknown).
 */
public record QueueStat(Status status, String reason, long txn, long size, long bytes, long firstPosition,
                        long nextPosition, long earliestNotBefore, long epoch, String owner, int flags, long lastSeq,
                        long digest, long store) {
    public QueueStat(Status status, String reason, long txn, long size, long bytes, long firstPosition,
                     long nextPosition, long earliestNotBefore, long epoch, String owner, int flags, long lastSeq,
                     long digest) {
        this(status, reason, txn, size, bytes, firstPosition, nextPosition, earliestNotBefore, epoch, owner, flags,
                lastSeq, digest, 0);
    }

    /** Without seq and digest (-1, 0: unknown; results built above one server). */
    public QueueStat(Status status, String reason, long txn, long size, long bytes, long firstPosition,
                     long nextPosition, long earliestNotBefore, long epoch, String owner, int flags) {
        this(status, reason, txn, size, bytes, firstPosition, nextPosition, earliestNotBefore, epoch, owner, flags, -1, 0);
    }

    /** Without queue flags (answers that carry none: errors, results built above one server). */
    public QueueStat(Status status, String reason, long txn, long size, long bytes, long firstPosition,
                     long nextPosition, long earliestNotBefore, long epoch, String owner) {
        this(status, reason, txn, size, bytes, firstPosition, nextPosition, earliestNotBefore, epoch, owner, 0);
    }

    public boolean isOk() {
        return status == Status.OK;
    }

    /** The server's copy is damaged (journal records of it lost): it may lack messages or hold deleted ones. */
    public boolean damaged() {
        return (flags & QueueFlags.DAMAGED) != 0;
    }
}
