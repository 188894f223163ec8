package org.jameskvs.client;

import org.jameskvs.protocol.Status;

/**
 * Outcome of a request that returns no data (or just a number). Errors are returned, not thrown:
 * check {@link #isOk()}. {@code txn} is the queue's transaction number after the request;
 * {@code value} is the opcode's number (PUT: the position; PING: the server's time), else 0.
 */
public record Ack(Status status, long txn, long value, String reason) {
    public boolean isOk() {
        return status == Status.OK;
    }

    public static Ack failed(Status status, String reason) {
        return new Ack(status, -1, 0, reason);
    }

    /** Throws {@link KvsException} unless OK; for callers off the hot path. */
    public Ack orThrow() {
        if (!isOk()) {
            throw new KvsException(status, reason);
        }
        return this;
    }
}
