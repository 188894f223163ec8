package org.jameskvs.server.storage;

import org.jameskvs.protocol.ReservedIds;

/** One queue: its metadata and its {@link QueueIndex}. Mutated only by {@link QueueStore} (one thread). */
final class StoredQueue implements QueueState {
    final int id;
    final String name;
    final QueueIndex index = new QueueIndex();
    long txn;
    /** Data mutations (PUT, DELETE, REPLACE, CLEAR) applied, or the value a REBASE set; see {@link QueueDigest}. */
    long seq;
    /** Rolling digest over those mutations ({@link QueueDigest}). */
    long digest;
    /** Replay only: {@link #seq} and {@link #digest} rest on a CREATE checkpoint or REBASE of this queue, not on a guess. */
    boolean seqKnown;
    long nextPosition = 1;
    /** Live messages whose id starts with a zero byte (system records, see {@link #isSystemId}). */
    long systemRecords;
    long epoch;
    String owner = "";
    long maxMessages;
    long maxBytes;
    /** Location of the latest CREATE (checkpoint) record; it pins its journal file. */
    long metaLocation;
    boolean dropped;
    /** The writer's commit point ({@link QueueStore#commitPoint}); -1: never declared (readers see everything). */
    long committed = -1;
    /** Location of the latest COMMIT record (0: none); it pins its journal file. */
    long commitLocation;
    /** Transactions whose effect may be missing from this queue; {@link QueueDamage#NONE} when intact. */
    QueueDamage damage = QueueDamage.NONE;
    /** Replay only: the part of {@link #damage} that a CREATE record in the journal already states. */
    QueueDamage damageJournaled = QueueDamage.NONE;
    /** Replay only: whether a record of this queue was replayed, so the next one can be checked against {@link #txn}. */
    boolean txnKnown;

    StoredQueue(int id, String name, long maxMessages, long maxBytes) {
        this.id = id;
        this.name = name;
        this.maxMessages = maxMessages;
        this.maxBytes = maxBytes;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long txn() {
        return txn;
    }

    @Override
    public long lastSeq() {
        return seq;
    }

    @Override
    public long committed() {
        return committed;
    }

    @Override
    public long digest() {
        return digest;
    }

    /** Outcomes of the latest sequenced mutations (null until the first). */
    RecentOutcomes outcomes;

    void outcome(long seq, org.jameskvs.protocol.Status status, long value) {
        if (outcomes == null) {
            outcomes = new RecentOutcomes();
        }
        outcomes.put(seq, status, txn, value);
    }

    /** A sequenced mutation of type {@code op} refused with {@code status}: it takes its seq all the same. */
    void refused(byte op, org.jameskvs.protocol.Status status) {
        seq++;
        digest = org.jameskvs.protocol.ContentDigest.refused(digest, seq, op, status);
        outcome(seq, status, 0);
    }

    /** One more data mutation of type {@code op} (a record type) applied: the live path and replay both call this. */
    void applied(byte op, int idCrc, int contentCrc) {
        seq++;
        digest = QueueDigest.next(digest, seq, op, idCrc, contentCrc);
    }

    @Override
    public long size() {
        return index.size();
    }

    @Override
    public long userSize() {
        return Math.max(0, index.size() - systemRecords);
    }

    @Override
    public long bytes() {
        return index.bytes();
    }

    @Override
    public long firstPosition() {
        return index.firstPosition(nextPosition);
    }

    @Override
    public long nextPosition() {
        return nextPosition;
    }

    @Override
    public long earliestNotBefore() {
        return index.earliestNotBefore();
    }

    @Override
    public long epoch() {
        return epoch;
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public long maxMessages() {
        return maxMessages;
    }

    @Override
    public long maxBytes() {
        return maxBytes;
    }

    /** Ids starting with a zero byte are system records (the replication layer's own), never mail. */
    static boolean isSystemId(byte[] id) {
        return ReservedIds.isReserved(id);
    }

    @Override
    public boolean damaged() {
        return damage.isDamaged();
    }

    @Override
    public QueueDamage damage() {
        return damage;
    }

    @Override
    public String toString() {
        return "Queue{" + name + "#" + id + ", size=" + size() + ", txn=" + txn + ", seq=" + seq + ", next=" + nextPosition + "}";
    }
}
