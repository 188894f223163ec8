package org.jameskvs.client;

import org.jameskvs.protocol.Status;

/** Outcome of a STAT. {@code earliestNotBefore} is Long.MAX_VALUE when no live message is delayed. */
public record QueueStat(Status status, String reason, long txn, long size, long bytes, long firstPosition,
                        long nextPosition, long earliestNotBefore, long epoch, String owner) {
    public boolean isOk() {
        return status == Status.OK;
    }
}
