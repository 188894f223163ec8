package org.jameskvs.client;

import org.jameskvs.protocol.Status;

/** A non-OK status turned into an exception by an {@code orThrow()} call (or by {@link KvsClient#connect}). */
public class KvsException extends RuntimeException {
    private final Status status;

    public KvsException(Status status, String reason) {
        super(status + ": " + (reason == null ? status.description() : reason));
        this.status = status;
    }

    public KvsException(Status status, String reason, Throwable cause) {
        super(status + ": " + (reason == null ? status.description() : reason), cause);
        this.status = status;
    }

    public Status status() {
        return status;
    }
}
