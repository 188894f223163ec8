package org.jameskvs.server.storage;

import org.jameskvs.protocol.Status;

/**
 * The stored outcome of one sequenced mutation, what a repeat of it is answered: its status, the
 * queue's transaction number right after it, and the PUT's position (0 for other mutations).
 */
public record MutationOutcome(Status status, long txn, long value) {
}
