package org.jameskvs.server.storage;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import static org.jameskvs.server.storage.JournalRecordDescriptor.*;

/**
 * Replay's per-queue check that no record went missing: every record carries its queue's
 * transaction number after it (a mutation one more than the record before it, a COPY, CREATE or
 * DROP the unchanged one), so a record whose number does not follow the queue's last one shows
 * that records in between were lost, and which transactions. A CRC alone cannot tell this when the
 * lost records are gone or unreadable: the queue's count would stay the same while a PUT (mail
 * lost) or a DELETE (mail back from the dead) is missing. What is found marks the queue
 * {@linkplain StoredQueue#damage damaged} and is reported as a problem.
 *
 * <p>Damage that no record can be tied to (a bad record whose length or header cannot be trusted)
 * marks every queue that exists at that point: any of them may have lost records there. The first
 * record replayed for a queue without its CREATE (a queue whose older files compaction deleted)
 * only sets where that queue's numbers start.
 */
final class ReplayContinuity {
    private final List<String> problems = new ArrayList<>();
    /** Queues that lost records in dropped blocks: one problem line each, added by {@link #problems()}. */
    private final Set<StoredQueue> droppedFrom = new LinkedHashSet<>();

    /** What was found, for the recovery report. */
    List<String> problems() {
        for (StoredQueue q : droppedFrom) {
            problems.add("queue " + (q.name != null ? "'" + q.name + "'" : "id " + q.id) + " lost " + q.damage.describe()
                    + ": its records in blocks dropped from the last journal file, though committed");
        }
        droppedFrom.clear();
        return problems;
    }

    static boolean isMutation(byte type) {
        return type == TYPE_PUT || type == TYPE_DELETE || type == TYPE_REPLACE || type == TYPE_CLEAR
                || type == TYPE_OWNER;
    }

    /** Before a PUT, DELETE, REPLACE, CLEAR, OWNER, COPY or DROP record of {@code q} is applied. */
    void before(StoredQueue q, byte type, long txn, Supplier<String> where) {
        long expected = isMutation(type) ? q.txn + 1 : q.txn;
        if (q.txnKnown && txn != expected) {
            if (txn > expected) {
                lost(q, new QueueDamage(q.txn + 1, isMutation(type) ? txn - 1 : txn),
                        "the queue's records jump from transaction " + q.txn + " to " + txn + " (" + typeName(type)
                                + " record)", where);
            } else {
                lost(q, new QueueDamage(1, q.txn), "a " + typeName(type) + " record carries transaction " + txn
                        + " after transaction " + q.txn, where);
            }
        }
        q.txnKnown = true;
    }

    /**
     * Before a CREATE record of a queue that already has records ({@code q}, possibly a nameless
     * placeholder): it carries the queue's current transaction. A lower one with the same name is a
     * lost DROP (the old contents would come back).
     */
    void beforeCreate(StoredQueue q, long txn, Supplier<String> where) {
        if (!q.txnKnown || txn == q.txn) {
            return;
        }
        if (txn > q.txn) {
            lost(q, new QueueDamage(q.txn + 1, txn), "the queue's records jump from transaction " + q.txn + " to "
                    + txn + " (CREATE record)", where);
        } else {
            lost(q, new QueueDamage(1, q.txn), "a CREATE record carries transaction " + txn + " after transaction "
                    + q.txn + " (a DROP record lost?)", where);
        }
    }

    /** After a CREATE record was applied to {@code q}: the damage it states (its optional tail). */
    static void createApplied(StoredQueue q, QueueDamage stated) {
        q.txnKnown = true;
        q.damage = q.damage.union(stated);
        q.damageJournaled = q.damageJournaled.union(stated);
    }

    /**
     * A record whose bounds are known but whose content is bad. Its header names a queue and a
     * transaction; when they fit that queue's sequence (the next mutation, or the current number for
     * a COPY, CREATE or DROP) the loss is that queue's; otherwise it cannot be tied to one.
     *
     * @return true when it was tied to a queue
     */
    boolean badRecord(Queues queues, byte type, int queueId, long txn, Supplier<String> where) {
        StoredQueue q = queues.byId(queueId);
        boolean fits = q != null && q.txnKnown && (isMutation(type) ? txn == q.txn + 1
                : (type == TYPE_COPY || type == TYPE_CREATE || type == TYPE_DROP || type == TYPE_REBASE || type == TYPE_SKIP
                        || type == TYPE_COMMIT)
                && txn == q.txn);
        if (!fits) {
            return false;
        }
        if (isMutation(type)) {
            lost(q, new QueueDamage(txn, txn), "its " + typeName(type) + " record of transaction " + txn
                    + " is damaged", where);
            q.txn = txn; // the next record of the queue follows it
        } else {
            lost(q, new QueueDamage(1, txn), "its " + typeName(type) + " record at transaction " + txn
                    + " is damaged (a compaction copy or checkpoint: any earlier message may be missing)", where);
        }
        return true;
    }

    /**
     * A record of a block that was dropped though it had been committed (a bad block of the last
     * file that complete blocks follow): every transaction of its queue after the last one replayed,
     * up to this record's, is lost; a COPY or checkpoint record may have held any earlier message.
     */
    void dropped(Queues queues, byte type, int queueId, long txn) {
        StoredQueue q = queues.byId(queueId);
        if (q == null) {
            return; // a queue created in the dropped part: none of it was replayed
        }
        QueueDamage d = isMutation(type) ? new QueueDamage(Math.min(q.txn + 1, txn), txn) : new QueueDamage(1, txn);
        q.damage = q.damage.union(d);
        droppedFrom.add(q);
    }

    /**
     * A CREATE checkpoint states another sequence or digest than replay folded from the queue's
     * earlier records: one of those records was lost (one whose transaction number a gap check
     * cannot see, e.g. the first of a file). The queue keeps the recomputed digest and is damaged.
     */
    void digestDiffers(StoredQueue q, long seq, long digest, long txn, Supplier<String> where) {
        lost(q, new QueueDamage(1, txn), "its checkpoint states seq " + seq + " digest " + Long.toHexString(digest)
                + " where replay found seq " + q.seq + " digest " + Long.toHexString(q.digest), where);
    }

    /** Damage no record can be tied to: every queue that exists now may have lost records there. */
    void unattributed(Collection<StoredQueue> queues, String why, Supplier<String> where) {
        for (StoredQueue q : queues) {
            q.damage = q.damage.union(new QueueDamage(q.txn + 1, QueueDamage.UNKNOWN_END));
        }
        problems.add("damage at " + where.get() + " that no record can be tied to (" + why + "): all "
                + queues.size() + " queue(s) marked damaged from their next transaction on");
    }

    private void lost(StoredQueue q, QueueDamage d, String what, Supplier<String> where) {
        q.damage = q.damage.union(d);
        problems.add("queue " + (q.name != null ? "'" + q.name + "'" : "id " + q.id) + " lost " + d.describe()
                + ": " + what + " at " + where.get());
    }
}
