package org.jameskvs.server.storage;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The queues by name and by journal id, and the in-memory effect of each record type. Live
 * operations (after their record is journaled) and recovery (replaying the record) call the same
 * methods, so the rebuilt state is the state that was acknowledged. Also keeps the journal files'
 * live-reference counts that space reclamation relies on.
 */
final class Queues {
    private final Journal journal;
    private final Map<String, StoredQueue> byName = new LinkedHashMap<>();
    private final Map<Integer, StoredQueue> byId = new HashMap<>();
    private int nextId = 1;

    Queues(Journal journal) {
        this.journal = journal;
    }

    StoredQueue byName(String name) {
        return byName.get(name);
    }

    StoredQueue byId(int id) {
        return byId.get(id);
    }

    Collection<StoredQueue> all() {
        return Collections.unmodifiableCollection(byName.values());
    }

    /** Replay: every queue including nameless placeholders. */
    Collection<StoredQueue> allById() {
        return Collections.unmodifiableCollection(byId.values());
    }

    /** A queue id not in use (ids of dropped queues are reused: replay is in journal order). */
    int freeId() {
        for (int i = 0; i < JournalRecordDescriptor.MAX_QUEUE_ID; i++) {
            int id = nextId;
            nextId = nextId == JournalRecordDescriptor.MAX_QUEUE_ID ? 1 : nextId + 1;
            if (!byId.containsKey(id)) {
                return id;
            }
        }
        return -1;
    }

    /**
     * Replay only: the queue for a record whose queue id has no CREATE yet. Compaction checkpoints a
     * queue's CREATE into the newest file, after records of that queue in older surviving files, so
     * those records are applied to a nameless placeholder that the checkpoint then names.
     */
    StoredQueue placeholder(int id) {
        return byId.computeIfAbsent(id, i -> new StoredQueue(i, null, Long.MAX_VALUE, Long.MAX_VALUE));
    }

    private StoredQueue adopt(StoredQueue placeholder, String name) {
        StoredQueue old = byName.get(name);
        if (old != null) {
            dropped(old);
        }
        StoredQueue q = new StoredQueue(placeholder.id, name, placeholder.maxMessages, placeholder.maxBytes);
        q.index.adoptFrom(placeholder.index);
        q.systemRecords = placeholder.systemRecords;
        q.txn = placeholder.txn;
        q.seq = placeholder.seq;
        q.digest = placeholder.digest;
        q.seqKnown = placeholder.seqKnown;
        q.outcomes = placeholder.outcomes;
        q.nextPosition = placeholder.nextPosition;
        q.epoch = placeholder.epoch;
        q.owner = placeholder.owner;
        q.damage = placeholder.damage;
        q.damageJournaled = placeholder.damageJournaled;
        q.txnKnown = placeholder.txnKnown;
        byId.put(q.id, q);
        byName.put(name, q);
        return q;
    }

    /** Replay only: placeholders never named by a CREATE (their CREATE was lost); @return their ids. */
    java.util.List<Integer> removeUnnamed() {
        java.util.List<Integer> ids = new java.util.ArrayList<>();
        for (StoredQueue q : java.util.List.copyOf(byId.values())) {
            if (q.name == null) {
                releaseAll(q);
                q.index.clear();
                byId.remove(q.id);
                ids.add(q.id);
            }
        }
        return ids;
    }

    // ---- effects of records

    /** CREATE: a new queue, or new limits / a metadata checkpoint of an existing one. */
    StoredQueue created(int id, String name, long maxMessages, long maxBytes, long nextPosition, long epoch,
                        String owner, long txn, long location) {
        StoredQueue q = byId.get(id);
        if (q != null && q.name == null) {
            q = adopt(q, name); // replay: records of this queue came before its (checkpointed) CREATE
        }
        if (q != null && !q.name.equals(name)) {
            dropped(q); // cannot happen without a DROP in between, unless that DROP record was lost
            q = null;
        }
        if (q == null) {
            StoredQueue old = byName.get(name);
            if (old != null) {
                dropped(old);
            }
            q = new StoredQueue(id, name, maxMessages, maxBytes);
            byId.put(id, q);
            byName.put(name, q);
            if (id >= nextId) {
                nextId = id == JournalRecordDescriptor.MAX_QUEUE_ID ? 1 : id + 1;
            }
        }
        q.maxMessages = maxMessages;
        q.maxBytes = maxBytes;
        q.nextPosition = Math.max(q.nextPosition, nextPosition);
        q.epoch = epoch;
        q.owner = owner;
        q.txn = txn;
        journal.unref(q.metaLocation, 0);
        q.metaLocation = location;
        journal.ref(location, 0);
        return q;
    }

    void put(StoredQueue q, long position, long location, int recordLength, int bodyLength, long notBefore,
             int hash, long txn) {
        q.index.append(position, location, recordLength, bodyLength, notBefore, hash);
        journal.ref(location, recordLength);
        q.nextPosition = Math.max(q.nextPosition, position + 1);
        q.txn = txn;
    }

    /** COPY: the message's live record moves to {@code location} (carrying its current state). */
    void copied(StoredQueue q, int slot, long location, int recordLength, long notBefore) {
        QueueIndex ix = q.index;
        journal.unref(ix.location(slot), ix.recordLength(slot));
        journal.unref(ix.stateLocation(slot), 0);
        ix.relocate(slot, location, recordLength, notBefore);
        journal.ref(location, recordLength);
    }

    void deleted(StoredQueue q, int slot, long txn) {
        release(q.index, slot);
        q.index.kill(slot);
        q.txn = txn;
    }

    void replaced(StoredQueue q, int slot, long location, long notBefore, long txn) {
        QueueIndex ix = q.index;
        journal.unref(ix.stateLocation(slot), 0);
        ix.replaceState(slot, location, notBefore);
        journal.ref(location, 0);
        q.txn = txn;
    }

    /** Also ends any damage: nothing the queue held before depends on lost records any more. */
    void cleared(StoredQueue q, long txn) {
        releaseAll(q);
        q.index.clear();
        q.systemRecords = 0;
        q.txn = txn;
        q.damage = QueueDamage.NONE;
        q.damageJournaled = QueueDamage.NONE;
    }

    /** COMMIT: the writer's commit point rose to {@code committed} (its record at {@code location}). */
    void committed(StoredQueue q, long committed, long location) {
        q.committed = Math.max(q.committed, committed);
        journal.unref(q.commitLocation, 0);
        q.commitLocation = location;
        journal.ref(location, 0);
    }

    /** REBASE: this copy was rebuilt from another one and takes over that one's sequence and digest. */
    void rebased(StoredQueue q, long seq, long digest) {
        q.committed = Math.min(q.committed, seq); // never above the copy's last seq
        q.seq = seq;
        q.digest = digest;
        q.seqKnown = true;
    }

    /**
     * REBASE with the source's next position: the rebuilt copy numbers its next PUT as the source
     * does. A message it holds at or above it (the replication record the rebuild wrote, numbered
     * apart) takes a position in order when it is written again; until then the index restores its
     * order when read ({@link QueueIndex#sortIfNeeded()}).
     */
    void positionsRebased(StoredQueue q, long nextPosition) {
        if (nextPosition > 0) {
            q.nextPosition = nextPosition;
        }
    }

    void ownerChanged(StoredQueue q, long epoch, String owner, long txn) {
        q.epoch = epoch;
        q.owner = owner;
        q.txn = txn;
    }

    void dropped(StoredQueue q) {
        releaseAll(q);
        q.index.clear();
        journal.unref(q.metaLocation, 0);
        q.metaLocation = 0;
        journal.unref(q.commitLocation, 0);
        q.commitLocation = 0;
        q.dropped = true;
        byId.remove(q.id);
        byName.remove(q.name, q);
    }

    private void releaseAll(StoredQueue q) {
        QueueIndex ix = q.index;
        for (int s = ix.head(); s < ix.tail(); s++) {
            if (ix.isLive(s)) {
                release(ix, s);
            }
        }
    }

    private void release(QueueIndex ix, int slot) {
        journal.unref(ix.location(slot), ix.recordLength(slot));
        journal.unref(ix.stateLocation(slot), 0);
    }
}
