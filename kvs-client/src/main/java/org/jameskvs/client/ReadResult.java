package org.jameskvs.client;

import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.List;

/** Outcome of a READ: a block of messages in position order and where the next block starts. */
public record ReadResult(Status status, String reason, long txn, long nextPosition, List<StoredMessage> messages) {
    public boolean isOk() {
        return status == Status.OK;
    }
}
