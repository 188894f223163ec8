package org.jameskvs.protocol;

/**
 * A payload that does not parse. Stackless: bad input is expected and must be cheap; the caller
 * turns it into a {@link Status#BAD_REQUEST} response.
 */
public final class MalformedPayloadException extends RuntimeException {
    public MalformedPayloadException(String message) {
        super(message, null, false, false);
    }
}
