package org.jameskvs.replication;

import org.jameskvs.client.GetResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.QueueFlags;
import org.jameskvs.protocol.Status;

/**
 * A node's answer to a {@link NodeRequest}, fed back into the state machine. {@code txn} is the
 * queue's transaction number after the request (-1 when unknown, e.g. client-side TIMEOUT);
 * {@code value} is the PUT position or PING time; OPEN fills {@code epoch}, {@code size} and
 * {@code flags} (the server's queue flags, {@link QueueFlags}) and {@code lastSeq}, {@code digest}
 * (the copy's content identity, -1 and 0 when unknown) and {@code store} (the node's store that holds
 * the copy: new after the node lost its disk; 0 when unknown); GET/READ/STAT fill their result.
 */
public record NodeResponse(long token, Status status, long txn, long value, String reason,
                           long epoch, long size, GetResult get, ReadResult read, QueueStat stat, int flags,
                           long lastSeq, long digest, long store) {

    /** An answer without a store id. */
    public NodeResponse(long token, Status status, long txn, long value, String reason,
                        long epoch, long size, GetResult get, ReadResult read, QueueStat stat, int flags,
                        long lastSeq, long digest) {
        this(token, status, txn, value, reason, epoch, size, get, read, stat, flags, lastSeq, digest, 0);
    }

    /** An answer without seq and digest. */
    public NodeResponse(long token, Status status, long txn, long value, String reason,
                        long epoch, long size, GetResult get, ReadResult read, QueueStat stat, int flags) {
        this(token, status, txn, value, reason, epoch, size, get, read, stat, flags, -1, 0);
    }

    /** An answer without queue flags (every answer but OPEN's). */
    public NodeResponse(long token, Status status, long txn, long value, String reason,
                        long epoch, long size, GetResult get, ReadResult read, QueueStat stat) {
        this(token, status, txn, value, reason, epoch, size, get, read, stat, 0);
    }

    public static NodeResponse of(long token, Status status, long txn, long value, String reason) {
        return new NodeResponse(token, status, txn, value, reason, 0, 0, null, null, null);
    }

    public static NodeResponse failed(long token, Status status, String reason) {
        return new NodeResponse(token, status, -1, 0, reason, 0, 0, null, null, null);
    }

    public boolean isOk() {
        return status == Status.OK;
    }

    /**
     * The node's copy is damaged (its server lost journal records of it): OPEN's flags or STAT's.
     * Its transaction number may still equal an intact copy's, so it is never taken as in sync.
     */
    public boolean damaged() {
        return (flags & QueueFlags.DAMAGED) != 0 || (stat != null && stat.damaged());
    }
}
