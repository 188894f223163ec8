package org.jameskvs.client;

import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.List;

/**
 * Outcome of a READ: a block of messages in position order and where the next block starts.
 *
 * <p>{@code positionSpace} names the copy whose positions these are. Positions of one server's
 * queue survive restarts, so a plain client always reports 0. A replicated queue reads from one
 * in-sync copy, and a rebuilt copy numbers its messages afresh: when the copy serving reads
 * changes, so does {@code positionSpace}, and a cursor kept from an earlier result must restart
 * from position 0 (otherwise it would skip mail that sits below it on the new copy).
 */
public record ReadResult(Status status, String reason, long txn, long nextPosition, List<StoredMessage> messages,
                         int positionSpace) {

    /** A result in position space 0 (a single server). */
    public ReadResult(Status status, String reason, long txn, long nextPosition, List<StoredMessage> messages) {
        this(status, reason, txn, nextPosition, messages, 0);
    }

    public boolean isOk() {
        return status == Status.OK;
    }

    /** The same result in another position space. */
    public ReadResult inPositionSpace(int space) {
        return new ReadResult(status, reason, txn, nextPosition, messages, space);
    }
}
