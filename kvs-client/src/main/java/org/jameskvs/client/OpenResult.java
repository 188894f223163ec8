package org.jameskvs.client;

import org.jameskvs.protocol.Status;

/** Outcome of an OPEN. {@code queue} is non-null only when OK. */
public record OpenResult(Status status, String reason, KvsQueue queue, long txn, long epoch, long size) {
    public boolean isOk() {
        return status == Status.OK;
    }

    public KvsQueue orThrow() {
        if (!isOk()) {
            throw new KvsException(status, reason);
        }
        return queue;
    }
}
