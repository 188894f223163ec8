package org.jameskvs.server.storage;

import org.jameskvs.protocol.Status;

/** A journal write or read that failed; carries the status the request gets. Internal only. */
final class JournalException extends Exception {
    final Status status;

    JournalException(Status status, String message, Throwable cause) {
        super(message, cause, false, false);
        this.status = status;
    }
}
