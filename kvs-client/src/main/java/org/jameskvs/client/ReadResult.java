package org.jameskvs.client;

import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.List;

/**
 * Outcome of a READ: a block of messages in position order and where the next block starts.
 *
 * <p>{@code positionSpace} names the numbering these positions belong to. Positions of one server's
 * queue survive restarts, so a plain client always reports 0. A replicated queue reads from one
 * in-sync copy; a PUT's position is its seq on both copies and a rebuild keeps the source's
 * positions, so a change of the copy serving reads between such copies keeps the space. It changes
 * only when the new copy may number otherwise (a copy without seqs, one whose seqs diverged, the
 * copies found again by a reclaim, or a read-only reader's switch): then a cursor kept from an
 * earlier result must restart from position 0 (otherwise it could skip mail below it).
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
