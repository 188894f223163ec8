package org.jameskvs.client;

import org.jameskvs.protocol.Status;

import java.util.List;

/** Outcome of a LIST: every queue on the server; {@code queues} is empty unless OK. */
public record ListResult(Status status, String reason, List<QueueInfo> queues) {
    public boolean isOk() {
        return status == Status.OK;
    }

    public List<QueueInfo> orThrow() {
        if (!isOk()) {
            throw new KvsException(status, reason);
        }
        return queues;
    }
}
