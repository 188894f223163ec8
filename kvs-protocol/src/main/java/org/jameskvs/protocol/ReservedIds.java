package org.jameskvs.protocol;

/**
 * The one rule for message ids that are not mail: an id starting with a zero byte (which a mail id
 * never does) is a system record, the replication layer's own record inside each copy. The server
 * leaves such records out of a queue's mail count; the replication layer and the readers of copies
 * (the OR-set repository's logs) skip them.
 */
public final class ReservedIds {
    private ReservedIds() {
    }

    /** Whether {@code id} is a system record's, not a mail's. */
    public static boolean isReserved(byte[] id) {
        return id.length > 0 && id[0] == 0;
    }
}
