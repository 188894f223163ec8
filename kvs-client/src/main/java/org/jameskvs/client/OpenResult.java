package org.jameskvs.client;

import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Status;

/**
 * Outcome of an OPEN. {@code queue} is non-null only when OK. {@code flags} are the server's queue
 * flags ({@link QueueFlags}; 0 from a server that does not send them). {@code lastSeq} and
 * {@code digest} identify the copy's content (equal copies have equal (epoch, lastSeq, digest));
 * -1 and 0 when unknown (errors, results built above one server). {@code store} names the server's
 * store that holds the copy (the same across its restarts, new after it lost its disk; 0: unknown).
 */
public record OpenResult(Status status, String reason, KvsQueue queue, long txn, long epoch, long size, int flags,
                         long lastSeq, long digest, long store) {
    public OpenResult(Status status, String reason, KvsQueue queue, long txn, long epoch, long size, int flags,
                      long lastSeq, long digest) {
        this(status, reason, queue, txn, epoch, size, flags, lastSeq, digest, 0);
    }

    public OpenResult(Status status, String reason, KvsQueue queue, long txn, long epoch, long size, int flags) {
        this(status, reason, queue, txn, epoch, size, flags, -1, 0);
    }

    /** Without queue flags (answers that carry none: errors, results built above one server). */
    public OpenResult(Status status, String reason, KvsQueue queue, long txn, long epoch, long size) {
        this(status, reason, queue, txn, epoch, size, 0);
    }

    public boolean isOk() {
        return status == Status.OK;
    }

    /** The server's copy is damaged (journal records of it lost): it may lack messages or hold deleted ones. */
    public boolean damaged() {
        return (flags & QueueFlags.DAMAGED) != 0;
    }

    public KvsQueue orThrow() {
        if (!isOk()) {
            throw new KvsException(status, reason);
        }
        return queue;
    }
}
