package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.ReadCodec;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.List;

import static org.jameskvs.server.storage.JournalRecordDescriptor.*;

/**
 * The storage engine: in-order queues of messages kept in one log-structured journal (a Chronicle
 * Queue of blocks of raw records, {@link JournalBlockDescriptor}, {@link JournalRecordDescriptor}) with an in-memory index of the live
 * messages per queue ({@link QueueIndex}). Bodies never live on the heap: GET and READ copy them
 * from the journal into the response buffer. A delete is a small DELETE record plus an index
 * removal; space comes back by deleting whole journal files ({@link Compactor}).
 *
 * <h2>Threading</h2>
 * Single-threaded by design: the server calls every method from one thread (its Netty event loop),
 * so nothing here locks. Do not call it from two threads.
 *
 * <h2>Errors</h2>
 * Expected failures come back as a {@link Status}, never as an exception: {@code NO_SUCH_QUEUE}
 * (the queue was dropped), {@code BAD_REQUEST} (empty or over-long id, record larger than
 * {@link #maxRecordBytes()}), {@code DUPLICATE_ID}, {@code NOT_FOUND}, {@code QUEUE_FULL},
 * {@code DISK_FULL} (free space below {@code minFreeDiskBytes}, journal over
 * {@code maxJournalBytes}, an IO error while writing, or no room on the file system behind the
 * journal's next pages ({@code BackedPages}: checked before a record is written into them, because a
 * write there would raise SIGBUS, which the JVM reports later and elsewhere, after the write seemed
 * to succeed); only PUTs stop at those limits, every other record goes on into a reserve past them
 * so that a full store can still drain: see {@code Journal.checkSpace}), {@code STORAGE_ERROR}
 * (anything else).
 * A mutation is applied to the index only after its record is completely in the journal, so a
 * failed write leaves the queue exactly as it was.
 *
 * <h2>The crash contract</h2>
 * A mutation's record goes into the journal's open <i>block</i> (one Chronicle document,
 * {@link JournalBlockDescriptor}); {@link #commit()} closes the block. The server sends the
 * responses of a block of requests only after that commit returned OK, so an acknowledged mutation
 * is in a complete block in the journal's memory-mapped file, i.e. in the OS page cache. (Callers
 * other than the server must call {@code commit()} the same way: a mutation not yet committed is
 * visible to reads but not yet in the journal.) What survives depends on {@link FsyncPolicy}:
 * <ul>
 * <li><b>process crash / kill -9</b>, any policy: every committed mutation survives (the page cache
 *     belongs to the kernel, which writes the mapped pages back on its own). A block still open at
 *     the crash is invisible to recovery, as a whole: Chronicle publishes a document's length only
 *     when it closes, and the next writer takes the unfinished document over. Its mutations were
 *     never acknowledged.</li>
 * <li><b>power loss or kernel crash</b>: with {@code BATCH}, everything OK'd before the last
 *     {@link #commit()} that returned OK survives (the server sends a block's responses only after
 *     its commit: an OK response means on disk). With {@code INTERVAL}, the fsync runs in
 *     {@link #maintenance()} once {@code fsyncIntervalMillis} passed since the last one, so
 *     mutations older than about the longer of that interval and the maintenance period survive;
 *     newer ones may be lost. With {@code NONE}, no promise: whatever the kernel had written back
 *     (Linux writes dirty pages back after about 30 s). Whatever is lost is a suffix of what was
 *     acknowledged, never a hole before a survivor. (A power cut is simulated by the server's tests:
 *     the durable state is copied at every fsync, and a server restarts on the last copy.)</li>
 * </ul>
 * <b>Recovery</b> ({@link #open}) replays the journal block by block and checks every record's
 * CRC32C before applying any record of its block, so no record is ever half-applied.
 * <ul>
 * <li><b>Last file</b>: a bad block in the <i>last</i> journal file ends replay: it and everything
 *     after it in that file are dropped and logged, so the state rebuilt is the state after a
 *     complete group commit, never part of one; the file is moved to {@code quarantine/} and its
 *     good blocks re-appended, so later restarts see a clean journal. When nothing complete follows
 *     the bad block it is a <b>torn tail</b> (a write cut short): with {@code BATCH} its mutations
 *     were never acknowledged (their fsync had not returned); with {@code NONE} or {@code INTERVAL}
 *     after a power cut they may have been: no promise, as above. When complete blocks follow it,
 *     they had been committed: the queues whose records are dropped are marked <b>damaged</b> (below)
 *     with the transactions lost, and the copy's transaction number falls behind, which a second
 *     copy shows.</li>
 * <li><b>Older files</b>: a bad block in an older file is damage to data that was complete. Its
 *     intact records are applied, also those after a bad record whose end is confirmed (the next
 *     record's CRC holds); the bad records are skipped and reported, and replay goes on. Every
 *     record carries its queue's transaction number, so replay also checks each queue's sequence: a
 *     gap, or a skipped record whose header fits the queue's sequence, marks that queue
 *     <b>damaged</b> with the transactions that may be lost (a lost PUT is a missing message, a lost
 *     DELETE one that came back); damage that no record can be tied to marks every queue that
 *     exists at that point. The queue's transaction number does <i>not</i> fall behind here.</li>
 * </ul>
 * A damaged queue gets one log line per open naming it and the transactions, is flagged in STAT
 * and OPEN responses (the {@code DAMAGED} queue flag) and in the metric {@code kvs_queue_damaged},
 * is recorded in the journal (its CREATE checkpoint) so it stays damaged across restarts and
 * compaction, and stays damaged until it is cleared or dropped (a rebuild of a copy starts with
 * CLEAR). It is still served, its other messages being intact, but never as intact:
 * {@link QueueState#damaged()}.
 * <p><b>Sequence and digest.</b> Every queue has a last seq (data mutations applied: PUT, DELETE,
 * REPLACE, CLEAR; owner changes do not count) and a rolling digest over them ({@link QueueDigest}),
 * which OPEN and STAT return so that two copies are compared by content. Replay recomputes both from
 * the records it applies, starting from the queue's first CREATE, or from the seq and digest a
 * CREATE checkpoint or REBASE record states when the earlier records are gone (compaction). So a
 * copy restarts with exactly the (seq, digest) it had acknowledged, and a copy whose journal lost a
 * mutation anywhere, an older file included, ends with another digest than an intact copy with
 * the same history, even where its transaction number still matches (a checkpoint whose digest
 * disagrees with the one recomputed before it also marks the queue damaged). A sequenced mutation
 * the store refused takes its seq as a SKIP record; the outcomes of a queue's latest sequenced
 * mutations ({@link RecentOutcomes}) are rebuilt by the same replay, so a repeat sent after a
 * restart gets the outcome the first one got (or {@code SEQ_TOO_OLD} once the records holding it
 * are gone).
 * <p>A bad file never stops the server from starting; what was found is in {@link #recoveryProblems()}
 * and the log. (Not covered: a lost CREATE of a queue whose only other records come after it: its
 * records are ignored and reported, and the queue is gone, which a second copy shows by its
 * transaction number. A corrupted Chronicle document header, whose length field Chronicle trusts,
 * makes the rest of that file unreadable: in an older file every queue is marked damaged, in the
 * last file it is a torn tail unless Chronicle knows of complete blocks after it, which marks every
 * queue damaged.)
 * <p>If Chronicle fails to complete a block at commit, its mutations are already in the index but
 * perhaps not in the journal: {@code commit()} returns an error and the server closes the
 * connections instead of answering (outcome unknown to their clients).
 * <p><b>Positions.</b> A PUT's position is its seq (or the queue's next position when higher: a
 * queue numbered by PUTs before), or the position the writer gives (a rebuild's copy, below the
 * tail too: {@link QueueIndex} then restores its order at the next read); REBASE may carry the
 * source's next position. The positions are in the PUT and REBASE records, so replay restores them.
 * <p><b>Commit point.</b> A queue's writer may declare its commit point ({@link #commitPoint}: the
 * highest seq it knows held by both copies); READ and GET on read handles then show no user message
 * whose position (its PUT's seq) is above it ({@link #visibleLimit}). It only rises, never above
 * the queue's last seq (a REBASE lowers it to the new seq if needed), and each rise is a COMMIT
 * record in the same block as the request that carried it, so what survives a crash is a value the
 * writer did declare, at most the last one: a restart never shows more than before it (it may show
 * less until the writer's next declaration). A block holding only COMMIT records is no reason to
 * fsync ({@code BATCH}): after a power cut the commit point may be an earlier one, which is safe
 * (less is shown), never a later one. A queue whose positions run ahead of its seqs (numbered by
 * PUTs before) is read without it. The latest COMMIT record pins its file and compaction
 * writes it again, so compaction never loses it; a queue with none (never declared, or a journal
 * written before this record existed) shows everything, as before.
 * <p><b>Journal format</b>: version 2 (blocks) of records of layout version 3 (CREATE carries the
 * queue's seq and digest; the REBASE record, with the next position; the COMMIT record type, which
 * older servers do not know: a journal holding one is not for them). Records of layout 2 (REBASE
 * without the next position) are read as they are. A journal written by version 1 (one record per
 * document) is read as one-record blocks, records of layout 1 as before (a queue without a stated
 * seq starts its digest at its oldest record replayed, so copies upgraded from it compare
 * different once and one is rebuilt); a block of an unknown version is a bad block. A PUT record
 * from its position on is the wire's message record ({@link org.jameskvs.protocol.MessageRecordDescriptor},
 * see "The message record is the journal's PUT tail" in {@link org.jameskvs.protocol}): a change of
 * that layout is a change of this format.
 * <p><b>Compaction never loses an acknowledged message</b>: a survivor's COPY record is written, and
 * its location switched to it, before the old file is deleted; files are deleted oldest first, so
 * DELETE records always outlive the PUTs they kill.
 * <p><i>Why this class is long:</i> it is the store's one entry point (every operation, each in the
 * same frame of checks and journal failures) and it holds the crash contract above, which belongs in
 * one place; about 520 of its lines are code. The work behind the calls is in {@link Journal},
 * {@link JournalRecords}, {@link Queues}, {@link Recovery} and {@link Compactor}.
 */
public final class QueueStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QueueStore.class);

    private final StoreConfig config;
    private final Journal journal;
    private final Queues queues;
    final JournalRecords records;
    private final Compactor compactor;
    private final Recovery.Report recovery;
    /** Which store this is ({@link StoreIdentity}): OPEN and STAT answers carry it. */
    private long storeId;
    private long lastForceMillis;
    private boolean unsynced;
    /** fsyncs of the journal since start (written on the store's thread, read by the metrics scrape). */
    private volatile long fsyncs;
    private String lastError = "";
    private long lastPutPosition;

    private QueueStore(StoreConfig config, Journal journal, Queues queues, Recovery.Report recovery) {
        this.config = config;
        this.journal = journal;
        this.queues = queues;
        this.records = new JournalRecords(journal);
        this.compactor = new Compactor(journal, queues, records, config.tuning());
        this.recovery = recovery;
        this.lastForceMillis = journal.time().currentTimeMillis();
    }

    /**
     * Opens the journal in {@code config.directory()} and rebuilds every queue from it.
     *
     * @throws UncheckedIOException only when the directory itself cannot be used
     */
    public static QueueStore open(StoreConfig config) {
        try {
            long storeId = StoreIdentity.loadOrCreate(config.directory());
            Journal journal = Journal.open(config);
            Queues queues = new Queues(journal);
            Recovery.Report report = new Recovery(journal, queues).replay();
            if (report.damagedFile() != null) {
                // The repair drops the torn tail, and with it what showed some damage: carry it over by name.
                java.util.Map<String, QueueDamage> found = new java.util.HashMap<>();
                for (StoredQueue q : queues.all()) {
                    found.put(q.name, q.damage);
                }
                journal.close();
                try {
                    Recovery.quarantineAndRepair(config, report.damagedFile(), report.goodInDamaged());
                } catch (JournalException | IOException | RuntimeException e) {
                    LOG.error("Repair of the damaged journal file {} failed: {}", report.damagedFile(), e.toString());
                }
                journal = Journal.open(config);
                queues = new Queues(journal);
                Recovery.Report second = new Recovery(journal, queues).replay();
                for (StoredQueue q : queues.all()) {
                    q.damage = q.damage.union(found.getOrDefault(q.name, QueueDamage.NONE));
                }
                List<String> problems = new java.util.ArrayList<>(report.problems());
                problems.addAll(second.problems());
                report = new Recovery.Report(second.records(), report.skipped() + second.skipped(), problems,
                        report.damagedFile(), report.goodInDamaged(), report.millis() + second.millis());
            }
            QueueStore store = new QueueStore(config, journal, queues, report);
            store.storeId = storeId;
            store.recordDamage();
            return store;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * After recovery: each damaged queue gets one log line, and damage the journal does not state yet
     * is written into a CREATE checkpoint of the queue (and synced unless the policy is NONE), so the
     * queue stays marked damaged after later restarts, also once compaction has deleted the damaged
     * file itself.
     */
    private void recordDamage() {
        boolean wrote = false;
        for (StoredQueue q : queues.all()) {
            if (!q.damage.isDamaged()) {
                continue;
            }
            LOG.error("Queue '{}' is damaged: {} may be lost (journal records missing or unreadable); it is served"
                    + " flagged DAMAGED (STAT, OPEN, metric kvs_queue_damaged) until it is cleared or dropped",
                    q.name, q.damage.describe());
            if (q.damageJournaled.covers(q.damage)) {
                continue;
            }
            try {
                long loc = records.create(q);
                queues.created(q.id, q.name, q.maxMessages, q.maxBytes, q.nextPosition, q.epoch, q.owner, q.txn, loc);
                q.damageJournaled = q.damage;
                wrote = true;
            } catch (JournalException e) {
                LOG.error("Cannot record the damage of queue '{}' in the journal: {}", q.name, e.getMessage());
            }
        }
        if (wrote) {
            unsynced = true;
            Status s = commit();
            if (s == Status.OK && config.fsyncPolicy() != FsyncPolicy.NONE) {
                s = force();
            }
            if (s != Status.OK) {
                LOG.error("Cannot commit the damage records: {} {}", s, lastError);
            }
            try {
                journal.releaseAppender(); // this is the opening thread; the server appends from its I/O thread
            } catch (JournalException e) {
                LOG.error("Cannot release the journal appender: {}", e.getMessage());
            }
        }
    }

    /** What recovery at {@link #open} found wrong (empty when the journal was clean). */
    /** This store's id ({@link StoreIdentity}): the same across restarts, new on an empty directory. */
    public long storeId() {
        return storeId;
    }

    public List<String> recoveryProblems() {
        return recovery.problems();
    }

    /** Records replayed at {@link #open}, and how long it took. */
    public long recoveredRecords() {
        return recovery.records();
    }

    public long recoveryMillis() {
        return recovery.millis();
    }

    /** Largest journal record: a message's id + state + body must fit in it (about 60 bytes less). */
    public long maxRecordBytes() {
        return journal.maxRecordBytes();
    }

    /** Why the last operation failed (for error responses and logs). */
    public String lastError() {
        return lastError;
    }

    /** The position the last PUT that returned OK gave its message. */
    public long lastPutPosition() {
        return lastPutPosition;
    }

    /** @return the queue or null. */
    public QueueState queue(String name) {
        return queues.byName(name);
    }

    /**
     * Creates the queue if absent (journaled), else returns the existing one (limits updated if
     * non-zero). Zero limits of a new queue mean the config's defaults.
     *
     * @return the queue, or null when the journal refused the write ({@link #lastError()} says why)
     */
    public QueueState create(String name, long maxMessages, long maxBytes) {
        StoredQueue q = queues.byName(name);
        try {
            if (q != null) {
                long m = maxMessages > 0 ? maxMessages : q.maxMessages;
                long b = maxBytes > 0 ? maxBytes : q.maxBytes;
                if (m != q.maxMessages || b != q.maxBytes) {
                    long loc = records.create(q.id, q.name, m, b, q.nextPosition, q.epoch, q.owner, q.txn, q.seq, q.digest,
                            q.damage);
                    queues.created(q.id, q.name, m, b, q.nextPosition, q.epoch, q.owner, q.txn, loc);
                    unsynced = true;
                }
                return q;
            }
            int id = queues.freeId();
            if (id < 0) {
                lastError = "no free queue id";
                return null;
            }
            long m = maxMessages > 0 ? maxMessages : config.defaultMaxMessages();
            long b = maxBytes > 0 ? maxBytes : config.defaultMaxBytes();
            long loc = records.create(id, name, m, b, 1, 0, "", 0, 0, 0, QueueDamage.NONE);
            unsynced = true;
            return queues.created(id, name, m, b, 1, 0, "", 0, loc);
        } catch (JournalException e) {
            lastError = e.getMessage();
            return null;
        }
    }

    public Collection<? extends QueueState> queues() {
        return queues.all();
    }

    /** On OK, the new message's position is {@link #lastPutPosition()}. */
    public Status put(QueueState q, byte[] id, int priority, long notBefore, ByteBuf state, ByteBuf body) {
        return put(q, id, priority, notBefore, state, body, false, 0);
    }

    public Status put(QueueState q, byte[] id, int priority, long notBefore, ByteBuf state, ByteBuf body,
                      boolean replaceExisting) {
        return put(q, id, priority, notBefore, state, body, replaceExisting, 0);
    }

    /**
     * The position of a PUT is its seq (the queue's seq after it, see the protocol's positions), or
     * the queue's next position when that is higher (a queue whose positions were counted by PUTs
     * before), or the one the writer gives.
     *
     * @param replaceExisting when a live message has this id, replace it: ONE journal record, whose
     *                        replay also kills the old version, so a crash leaves old or new, never neither
     * @param position        0: the server numbers it; else this position (a rebuild's copy of its
     *                        source's message): it must be free (the message it replaces aside)
     */
    public Status put(QueueState q, byte[] id, int priority, long notBefore, ByteBuf state, ByteBuf body,
                      boolean replaceExisting, long position) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        if (id == null || id.length == 0 || id.length > Wire.MAX_ID_LENGTH) {
            return fail(Status.BAD_REQUEST, "message id must be 1.." + Wire.MAX_ID_LENGTH + " bytes");
        }
        if (position < 0) {
            return fail(Status.BAD_REQUEST, "position must be >= 1 (0: the server's), got " + position);
        }
        // Before find(): a search of the order may re-sort the index, which moves slots.
        boolean positionTaken = position > 0 && sq.index.hasLivePosition(position);
        try {
            int hash = LiveIdTable.hash(id, 0, id.length);
            int existing = find(sq, id, hash);
            if (existing >= 0 && !replaceExisting) {
                return fail(Status.DUPLICATE_ID, "a live message has this id");
            }
            int bodyLen = body.readableBytes();
            int countAfter = sq.index.size() + (existing >= 0 ? 0 : 1);
            long bytesAfter = sq.index.bytes() + bodyLen - (existing >= 0 ? sq.index.bodyLength(existing) : 0);
            if (countAfter > sq.maxMessages || bytesAfter > sq.maxBytes) {
                return fail(Status.QUEUE_FULL, "queue " + sq.name + " holds " + sq.index.size() + " messages, "
                        + sq.index.bytes() + " bytes (limits " + sq.maxMessages + ", " + sq.maxBytes + ")");
            }
            if (positionTaken && (existing < 0 || sq.index.position(existing) != position)) {
                return fail(Status.BAD_REQUEST, "position " + position + " is another live message's");
            }
            long at = position > 0 ? position : Math.max(sq.seq + 1, sq.nextPosition);
            long txn = sq.txn + 1;
            int contentCrc = QueueDigest.contentCrc(priority & 0xFF, notBefore, state, body);
            long loc = records.put(sq.id, txn, at, id, priority & 0xFF, notBefore, state, body);
            int recordLength = ID + id.length + AFTER_ID_FIXED + state.readableBytes() + 4 + bodyLen;
            if (existing >= 0) {
                queues.deleted(sq, existing, txn); // same record, same transaction: replay does the same
            }
            queues.put(sq, at, loc, recordLength, bodyLen, notBefore, hash, txn);
            lastPutPosition = at;
            sq.applied(TYPE_PUT, QueueDigest.crc(id, 0, id.length), contentCrc);
            if (existing < 0 && StoredQueue.isSystemId(id)) {
                sq.systemRecords++;
            }
            unsynced = true;
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected("put", e);
        }
    }

    public Status delete(QueueState q, byte[] id) {
        return mutate(q, "delete", (sq, txn) -> {
            int slot = find(sq, id);
            if (slot < 0) {
                return fail(Status.NOT_FOUND, "no live message with this id");
            }
            records.delete(sq.id, txn, sq.index.position(slot), id);
            queues.deleted(sq, slot, txn);
            sq.applied(TYPE_DELETE, QueueDigest.crc(id, 0, id.length), 0);
            if (StoredQueue.isSystemId(id)) {
                sq.systemRecords--;
            }
            return Status.OK;
        });
    }

    public Status replace(QueueState q, byte[] id, int priority, long notBefore, ByteBuf state) {
        return mutate(q, "replace", (sq, txn) -> {
            int slot = find(sq, id);
            if (slot < 0) {
                return fail(Status.NOT_FOUND, "no live message with this id");
            }
            long loc = records.replace(sq.id, txn, sq.index.position(slot), id, priority & 0xFF, notBefore, state);
            queues.replaced(sq, slot, loc, notBefore, txn);
            sq.applied(TYPE_REPLACE, QueueDigest.crc(id, 0, id.length),
                    QueueDigest.contentCrc(priority & 0xFF, notBefore, state, null));
            return Status.OK;
        });
    }

    public Status clear(QueueState q) {
        return mutate(q, "clear", (sq, txn) -> {
            records.headerOnly(TYPE_CLEAR, sq.id, txn);
            queues.cleared(sq, txn);
            sq.applied(TYPE_CLEAR, 0, 0);
            return Status.OK;
        });
    }

    /** One journaled mutation of a live queue under the next transaction number. */
    private interface Mutation {
        Status apply(StoredQueue sq, long txn) throws JournalException;
    }

    /**
     * The frame every mutation shares: a dropped queue answers NO_SUCH_QUEUE; a journal failure its
     * own status (DISK_FULL, ...), anything unexpected STORAGE_ERROR, both before the index changes;
     * an applied mutation marks the journal as needing a sync.
     */
    private Status mutate(QueueState q, String what, Mutation mutation) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        try {
            Status s = mutation.apply(sq, sq.txn + 1);
            if (s == Status.OK) {
                unsynced = true;
            }
            return s;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected(what, e);
        }
    }

    public Status drop(QueueState q) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        try {
            records.headerOnly(TYPE_DROP, sq.id, sq.txn);
            queues.dropped(sq);
            unsynced = true;
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected("drop", e);
        }
    }

    /** The kept outcome of sequenced mutation {@code seq} of the queue, or null ({@link RecentOutcomes}). */
    public MutationOutcome outcome(QueueState q, long seq) {
        StoredQueue sq = live(q);
        return sq == null || sq.outcomes == null ? null : sq.outcomes.get(seq);
    }

    /** After a sequenced mutation was applied (OK): its outcome is kept for repeats. */
    public void keepOutcome(QueueState q, long value) {
        StoredQueue sq = live(q);
        if (sq != null) {
            sq.outcome(sq.seq, Status.OK, value);
        }
    }

    /**
     * A sequenced mutation (the queue's next seq) that the store refused for good (NOT_FOUND,
     * DUPLICATE_ID, QUEUE_FULL, BAD_REQUEST) or for its limits (DISK_FULL): it takes its seq all the
     * same, journaled as a SKIP record (which may use the reserve past the limits), so both copies of a
     * queue stay in step and a repeat gets the same refusal.
     *
     * @return OK, or the journal's failure (then the seq is not taken)
     */
    public Status skip(QueueState q, Opcode op, Status refused) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        byte type = switch (op) {
            case PUT -> TYPE_PUT;
            case DELETE -> TYPE_DELETE;
            case REPLACE -> TYPE_REPLACE;
            default -> TYPE_CLEAR;
        };
        String why = lastError;
        try {
            records.skip(sq.id, sq.txn, sq.seq + 1, type, refused.code());
            sq.refused(type, refused);
            unsynced = true;
            lastError = why;
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected("skip", e);
        }
    }

    /**
     * REBASE: this copy was just rebuilt from another one (same live messages, in the same order)
     * and takes over that copy's sequence and digest, so that the two compare equal from here on.
     * Journaled; not a mutation (the transaction number does not move).
     */
    public Status rebase(QueueState q, long seq, long digest) {
        return rebase(q, seq, digest, 0);
    }

    /**
     * REBASE with the source's next position as well (0: keep this copy's), so that both copies give
     * the next PUT the same position.
     */
    public Status rebase(QueueState q, long seq, long digest, long nextPosition) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        if (seq < 0 || nextPosition < 0) {
            return fail(Status.BAD_REQUEST, "sequence and next position must be >= 0");
        }
        try {
            records.rebase(sq.id, sq.txn, seq, digest, nextPosition);
            queues.rebased(sq, seq, digest);
            queues.positionsRebased(sq, nextPosition);
            unsynced = true;
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected("rebase", e);
        }
    }

    /**
     * The writer's commit point (flag 0x0008 of a sequenced mutation, or COMMIT): the highest seq
     * it knows held by both copies of the queue. Kept monotonic and at most the queue's last seq;
     * journaled (a COMMIT record) when it rises, so a restart never shows more than was declared
     * (see "Commit point" in the class doc). Not a mutation: the transaction number does not move.
     *
     * @return OK, or the journal's failure (then the commit point stays where it was)
     */
    public Status commitPoint(QueueState q, long committed) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        if (committed < 0) {
            return fail(Status.BAD_REQUEST, "committed seq must be >= 0");
        }
        long c = Math.min(committed, sq.seq);
        if (c <= sq.committed && sq.committed >= 0) {
            return Status.OK;
        }
        try {
            // Not a reason to fsync (BATCH): a COMMIT record lost to a power cut only shows readers less.
            queues.committed(sq, c, records.committed(sq.id, sq.txn, c));
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected("commitPoint", e);
        }
    }

    /**
     * The highest position READ and GET on a read handle may show: the queue's commit point, or
     * everything when its writer never declared one (single-server clients) or when its positions
     * are not its seqs (a queue numbered by PUTs before, whose next position is above its last seq + 1).
     * A PUT's position is its seq, so a message above it is one whose PUT its writer does not know on
     * both copies.
     */
    public static long visibleLimit(QueueState q) {
        long c = q.committed();
        // A queue whose positions run ahead of its seqs (numbered by PUTs before positions were seqs)
        // cannot compare a position with a seq: read as before, up to its last seq.
        return c < 0 || q.nextPosition() > q.lastSeq() + 1 ? Long.MAX_VALUE : c;
    }

    /** Records a new owner and epoch (journaled, counts as a mutation). */
    public Status setOwner(QueueState q, long epoch, String owner) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        try {
            long txn = sq.txn + 1;
            String o = owner == null ? "" : owner;
            records.owner(sq.id, txn, epoch, o);
            queues.ownerChanged(sq, epoch, o, txn);
            unsynced = true;
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (RuntimeException e) {
            return unexpected("setOwner", e);
        }
    }

    /** GET: writes one message record ({@link org.jameskvs.protocol.MessageRecordDescriptor}); returns NOT_FOUND (writing nothing) when no live message has the id. */
    public Status get(QueueState q, byte[] id, ByteBuf out) {
        return get(q, id, out, Long.MAX_VALUE);
    }

    /**
     * GET showing no user message above {@code maxPosition} (a read handle: {@link #visibleLimit});
     * the replication's system records (ids starting with a zero byte) are always shown.
     */
    public Status get(QueueState q, byte[] id, ByteBuf out, long maxPosition) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        int mark = out.writerIndex();
        try {
            int slot = find(sq, id);
            if (slot < 0) {
                return fail(Status.NOT_FOUND, "no live message with this id");
            }
            if (sq.index.position(slot) > maxPosition && !org.jameskvs.protocol.ReservedIds.isReserved(id)) {
                return fail(Status.NOT_FOUND, "its PUT is beyond the queue's commit point");
            }
            records.writeMessage(sq.index, slot, out);
            return Status.OK;
        } catch (IOException | RuntimeException e) {
            out.writerIndex(mark);
            return unexpected("get", e);
        }
    }

    /**
     * READ: writes the whole OK payload ({@link ReadCodec}: i64 nextPosition, i32 count, records): live messages with
     * position &gt;= {@code fromPosition} in position order, skipping those with notBefore &gt;
     * {@code readyBefore} when it is not 0, up to {@code maxCount} messages and {@code maxBytes} of
     * bodies (a message that would go over is left for the next READ, except the first, which is
     * always returned). A limit &lt;= 0 means no limit. {@code nextPosition} is one past the last
     * message returned when a limit stopped the read, else the queue's next position.
     */
    public Status read(QueueState q, long fromPosition, int maxCount, int maxBytes, long readyBefore, ByteBuf out) {
        return read(q, fromPosition, maxCount, maxBytes, readyBefore, out, Long.MAX_VALUE);
    }

    /**
     * READ stopping before the first user message above {@code maxPosition} (a read handle:
     * {@link #visibleLimit}): {@code nextPosition} is then its position, so the reader reads it once
     * it is committed. The replication's system records (ids starting with a zero byte) are not held
     * back.
     */
    public Status read(QueueState q, long fromPosition, int maxCount, int maxBytes, long readyBefore, ByteBuf out,
                       long maxPosition) {
        StoredQueue sq = live(q);
        if (sq == null) {
            return fail(Status.NO_SUCH_QUEUE, "queue was dropped");
        }
        int mark = out.writerIndex();
        try {
            int countLimit = maxCount <= 0 ? Integer.MAX_VALUE : maxCount;
            long bytesLimit = maxBytes <= 0 ? Long.MAX_VALUE : maxBytes;
            ReadCodec.beginRecords(out);
            QueueIndex ix = sq.index;
            int count = 0;
            long bodies = 0;
            long next = sq.nextPosition;
            for (int s = ix.lowerBound(fromPosition); s < ix.tail(); s++) {
                if (!ix.isLive(s) || readyBefore != 0 && ix.notBefore(s) > readyBefore) {
                    continue;
                }
                int bodyLen = ix.bodyLength(s);
                if (count >= countLimit || count > 0 && bodies + bodyLen > bytesLimit) {
                    next = ix.position(s);
                    break;
                }
                int at = out.writerIndex();
                records.writeMessage(ix, s, out);
                if (ix.position(s) > maxPosition
                        && out.getByte(at + org.jameskvs.protocol.MessageRecordDescriptor.ID_OFFSET) != 0) { // not reserved (ReservedIds)
                    out.writerIndex(at); // a user message beyond the commit point: the read stops before it
                    next = ix.position(s);
                    break;
                }
                count++;
                bodies += bodyLen;
            }
            ReadCodec.endRecords(out, mark, next, count);
            return Status.OK;
        } catch (IOException | RuntimeException e) {
            out.writerIndex(mark);
            return unexpected("read", e);
        }
    }

    /**
     * End of a block of requests: group commit. Closes the journal block holding the mutations since
     * the last commit (from here they survive a crash of the process) and fsyncs if the policy is
     * BATCH. Only after an OK may their responses be sent; any other status means they may not be in
     * the journal, so they must not be acknowledged.
     */
    public Status commit() {
        try {
            journal.endBlock();
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        }
        journal.announceWritePosition();
        if (config.fsyncPolicy() != FsyncPolicy.BATCH || !unsynced) {
            return Status.OK;
        }
        return force();
    }

    /** fsyncs of the journal since start (any policy: {@code kvs_fsyncs_total}). */
    public long fsyncs() {
        return fsyncs;
    }

    /** Periodic housekeeping: interval fsync, copy-forward of long-lived messages, deletion of dead journal files. */
    public void maintenance() {
        long now = journal.time().currentTimeMillis();
        if (config.fsyncPolicy() == FsyncPolicy.INTERVAL && unsynced
                && now - lastForceMillis >= config.fsyncIntervalMillis()) {
            force();
        }
        try {
            compactor.run();
            journal.endBlock(); // its COPY records: not left in a block no request would close
        } catch (JournalException e) {
            LOG.warn("Compaction stopped: {}", e.getMessage());
        } catch (IOException | RuntimeException e) {
            LOG.error("Compaction failed", e);
        }
    }

    /** Total bytes of journal files on disk. */
    public long journalBytes() {
        return journal.bytesOnDisk();
    }

    /** The journal's bytes as {@code journal.maxBytes} counts them: each file up to the end of its last record. */
    public long journalUsedBytes() {
        return journal.usedBytes();
    }

    /** Number of journal (cycle) files the store knows of. */
    public int journalFiles() {
        int n = 0;
        for (CycleFile ignored : journal.files()) {
            n++;
        }
        return n;
    }

    @Override
    public void close() {
        if (config.fsyncPolicy() != FsyncPolicy.NONE && unsynced) {
            force();
        }
        journal.close();
        records.close();
    }

    // ---- helpers

    private Status force() {
        try {
            journal.force();
            fsyncs++;
            unsynced = false;
            lastForceMillis = journal.time().currentTimeMillis();
            return Status.OK;
        } catch (JournalException e) {
            return fail(e.status, e.getMessage());
        } catch (IOException | RuntimeException e) {
            return unexpected("fsync", e);
        }
    }

    private static StoredQueue live(QueueState q) {
        return q instanceof StoredQueue sq && !sq.dropped ? sq : null;
    }

    private int find(StoredQueue sq, byte[] id) {
        if (id == null || id.length == 0 || id.length > Wire.MAX_ID_LENGTH) {
            return -1;
        }
        return find(sq, id, LiveIdTable.hash(id, 0, id.length));
    }

    /** A hash match is confirmed by reading the id back from the journal (ids are not on the heap). */
    private int find(StoredQueue sq, byte[] id, int hash) {
        return sq.index.find(hash, slot -> records.idMatches(sq.index, slot, id));
    }

    private Status fail(Status s, String why) {
        lastError = why;
        return s;
    }

    private Status unexpected(String op, Exception e) {
        LOG.error("Storage failure in {}", op, e);
        lastError = op + ": " + e;
        return Status.STORAGE_ERROR;
    }
}
