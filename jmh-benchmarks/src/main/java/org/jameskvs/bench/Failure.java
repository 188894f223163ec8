package org.jameskvs.bench;

import org.jameskvs.client.Ack;

/**
 * Why a request did not succeed: {@code kind} groups failures in a report (a KVS status such as
 * DUPLICATE_ID or TIMEOUT, a Redis error word such as ERR, or EMPTY when LPOP found nothing),
 * {@code detail} is one example's text.
 */
public record Failure(String kind, String detail) {
    /** null when the ack is OK, else its status and reason. */
    public static Failure of(Ack ack) {
        return ack.isOk() ? null : new Failure(ack.status().name(), ack.reason());
    }

    /** From an exceptional completion (a Redis error reply, a lost connection). */
    public static Failure of(Throwable t) {
        Throwable cause = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
        String message = cause.getMessage() == null ? "" : cause.getMessage();
        int space = message.indexOf(' ');
        String kind = cause instanceof io.lettuce.core.RedisCommandExecutionException && space > 0
                ? message.substring(0, space) : cause.getClass().getSimpleName();
        return new Failure(kind, message);
    }
}
