package org.jameskvs.server.storage;

import org.jameskvs.protocol.Status;

/**
 * The outcomes of a queue's most recent sequenced mutations, by seq: what a repeat of one of them
 * is answered (an idempotent retry after a lost answer or a path switch gets the first outcome,
 * never a second application). A ring of {@link #CAPACITY} entries, twice the client's default
 * in-flight window (1,024), so every request a writer can have in flight is still answered.
 * Rebuilt by replay from the journal, so a repeat sent after a server restart is answered too.
 * Allocated on the first outcome (2,048 x 25 bytes: about 50 KB per queue).
 */
final class RecentOutcomes {
    static final int CAPACITY = 2048;

    private final long[] seqs = new long[CAPACITY];
    private final long[] txns = new long[CAPACITY];
    private final long[] values = new long[CAPACITY];
    private final byte[] statuses = new byte[CAPACITY];

    void put(long seq, Status status, long txn, long value) {
        int i = (int) (seq & (CAPACITY - 1));
        seqs[i] = seq;
        txns[i] = txn;
        values[i] = value;
        statuses[i] = (byte) status.code();
    }

    /** @return the outcome of {@code seq}, or null when it is not kept (older than the ring) */
    MutationOutcome get(long seq) {
        int i = (int) (seq & (CAPACITY - 1));
        return seq > 0 && seqs[i] == seq ? new MutationOutcome(Status.fromCode(statuses[i]), txns[i], values[i]) : null;
    }
}
