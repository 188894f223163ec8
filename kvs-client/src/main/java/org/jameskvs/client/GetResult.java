package org.jameskvs.client;

import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

/** Outcome of a GET; {@code message} is non-null only when OK. */
public record GetResult(Status status, String reason, long txn, StoredMessage message) {
    public boolean isOk() {
        return status == Status.OK;
    }
}
