package org.jameskvs.server.storage;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.jameskvs.server.storage.JournalRecordDescriptor.*;

/**
 * Rebuilds every queue by replaying the journal from its first file (FlashQ: "restart and read the
 * MIN table from the disk queue"), one block (Chronicle document) at a time, as the crash contract in
 * {@link QueueStore} says. Every record's CRC32C is checked before any record of its block is
 * applied ({@link JournalBlockReader}), so a bad record is never half-applied. A bad block in the
 * last file ends replay; the blocks after it are still read (never applied), to tell a torn tail
 * (nothing complete after it) from damage (see {@code DroppedTail}), and the file is then repaired
 * ({@link #quarantineAndRepair}) so that new blocks are never appended behind garbage. A bad block in
 * an older file loses only its bad records ({@link JournalBlockReader#walkPastDamage}). Every
 * queue's transaction numbers are checked for gaps as records are applied
 * ({@link ReplayContinuity}). Problems are logged and returned in the {@link Report}; nothing here
 * throws for a bad file.
 * <p><i>Why this class is long:</i> replay is one pass whose rules (bad blocks in the last or an older
 * file, sequence gaps, checkpoints, damage marks) depend on each other's state; about 490 of its
 * lines are code.
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

    /**
     * What replay found. {@code damagedFile} is set when the last file must be repaired; its first
     * {@code goodInDamaged} blocks are intact.
     */
    record Report(long records, long skipped, List<String> problems, Path damagedFile, long goodInDamaged,
                  long millis) {
    }

    private final Journal journal;
    private final Queues queues;
    private final JournalBlockReader reader = new JournalBlockReader();
    private final ReplayContinuity continuity = new ReplayContinuity();
    private byte[] buf = new byte[64 << 10];
    /** Offset in {@code buf} of the record being applied. */
    private int base;
    private final List<String> problems = new ArrayList<>();
    /** Where the block being replayed is, for problem reports (built only when one is reported). */
    private File blockFile;
    private long blockIndex;
    private final java.util.function.Supplier<String> where = () ->
            (blockFile != null ? blockFile.getName() : "?") + " index 0x" + Long.toHexString(blockIndex);

    Recovery(Journal journal, Queues queues) {
        this.journal = journal;
        this.queues = queues;
    }

    Report replay() {
        long t0 = System.nanoTime();
        SingleChronicleQueue cq = journal.chronicle();
        long records = 0;
        long skipped = 0;
        Path damaged = null;
        long goodInDamaged = 0;
        int lastCycle = cq.lastCycle();
        long lastGoodIndex = -1;
        int currentCycle = Integer.MIN_VALUE;
        long goodInCycle = 0;
        DroppedTail tail = null;
        boolean unreadableInLast = false;
        long unreadableIndex = -1;
        try (ExcerptTailer tailer = cq.createTailer()) {
            while (true) {
                int cycle = Integer.MIN_VALUE;
                File file = null;
                long index = -1;
                String bad;
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    cycle = tailer.cycle();
                    file = tailer.currentFile();
                    index = dc.index();
                    blockFile = file;
                    blockIndex = index;
                    if (cycle != currentCycle) {
                        currentCycle = cycle;
                        goodInCycle = 0;
                    }
                    Bytes<?> bytes = dc.wire().bytes();
                    long start = bytes.readPosition();
                    long n = bytes.readRemaining();
                    if (n > Integer.MAX_VALUE - 16) {
                        throw new IllegalStateException("document of " + n + " bytes");
                    }
                    ensure((int) n);
                    bytes.read(buf, 0, (int) n);
                    bad = reader.check(buf, (int) n);
                    if (tail != null) {
                        tail.add((int) n, bad == null); // past a bad block of the last file: read, never applied
                        continue;
                    }
                    CycleFile f = journal.fileForCycle(cycle, file);
                    if (bad != null && cycle >= lastCycle) {
                        problems.add("bad block in the last journal file at " + where.get() + ": " + bad
                                + "; replay stopped there, that whole block and the rest of that file are dropped");
                        damaged = file.toPath();
                        goodInDamaged = goodInCycle;
                        tail = new DroppedTail();
                        tail.add((int) n, false);
                        continue;
                    }
                    String unapplied = applyIntact(f, start);
                    records += reader.intactRecords();
                    if (bad != null) {
                        records += applyPastDamage(f, start, (int) n);
                    }
                    bad = bad != null ? bad : unapplied;
                    journal.addUsed(f, start + n);
                    if (bad == null) {
                        goodInCycle++;
                        lastGoodIndex = index;
                        continue;
                    }
                } catch (Throwable t) {
                    bad = "unreadable document: " + t;
                    if (cycle == Integer.MIN_VALUE) {
                        cycle = safeCycle(tailer);
                    }
                }
                String at = (file != null ? file.getName() : "cycle " + cycle) + " index 0x" + Long.toHexString(index);
                if (cycle >= lastCycle && bad.startsWith("unreadable")) {
                    if (tail == null) {
                        problems.add("unreadable block in the last journal file at " + at + ": " + bad
                                + "; replay stopped there, that block and the rest of that file are dropped");
                        CycleFile newest = journal.newest();
                        damaged = file != null ? file.toPath() : newest == null ? null : newest.path;
                        goodInDamaged = goodInCycle;
                        unreadableIndex = index;
                    }
                    unreadableInLast = true;
                    break;
                }
                skipped++;
                problems.add("bad record skipped in an older journal file at " + at + ": " + bad
                        + "; the other intact records of its block were applied (" + reader.intactRecords()
                        + " before the bad one)");
                if (!(bad.startsWith("unreadable"))) {
                    continue;
                }
                continuity.unattributed(queues.allById(), "the rest of that file cannot be read", () -> at);
                try {
                    if (!tailer.moveToCycle(cq.nextCycle(cycle, net.openhft.chronicle.queue.TailerDirection.FORWARD))) {
                        break;
                    }
                } catch (Throwable t) {
                    problems.add("cannot move past " + at + ": " + t + "; replay stopped");
                    break;
                }
            }
        } catch (Throwable t) {
            problems.add("journal replay failed: " + t);
        }
        if (tail != null && (tail.completeAfterBad || unreadableInLast)) {
            // Blocks past the bad one were committed (complete, or Chronicle saw them closed): what they
            // and the bad block held was there, maybe acknowledged, and is dropped: damage.
            problems.add("complete blocks followed the bad block of the last journal file: not a torn tail;"
                    + " what the dropped blocks held is lost");
            tail.report();
        } else if (tail != null) {
            problems.add("nothing complete followed it: a torn tail (" + tail.blocks + " block(s) dropped)");
        } else if (unreadableInLast) {
            if (committedBeyond(cq, Math.max(lastGoodIndex, unreadableIndex), unreadableIndex < 0)) {
                continuity.unattributed(queues.allById(), "complete blocks follow an unreadable one in the last file",
                        () -> "the end of the last journal file");
            }
        } else if (records > 0) {
            damaged = hiddenTail(cq, lastGoodIndex, lastCycle);
            if (damaged != null) {
                goodInDamaged = goodInCycle;
                continuity.unattributed(queues.allById(), "complete blocks lie past what could be read",
                        () -> "the end of the last journal file");
            }
        }
        problems.addAll(continuity.problems());
        for (int id : queues.removeUnnamed()) {
            problems.add("records of queue id " + id + " had no CREATE record; they were ignored");
        }
        for (StoredQueue q : queues.all()) {
            q.index.sortIfNeeded();
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        for (String p : problems) {
            LOG.error("Journal recovery: {}", p);
        }
        LOG.info("Journal recovery replayed {} records in {} ms ({} skipped, {} problems)", records, millis,
                skipped, problems.size());
        return new Report(records, skipped, List.copyOf(problems), damaged, goodInDamaged, millis);
    }

    /**
     * The blocks of the last file from its first bad one on: dropped, never applied, but read, so
     * that if complete blocks follow the bad one (it was no torn write: they were committed after
     * it) the queues whose records are dropped can be marked damaged.
     */
    private final class DroppedTail {
        /** Records seen in the dropped blocks: queue id, type, transaction. */
        private final List<long[]> dropped = new ArrayList<>();
        /** Bad records with a known end: their headers, which may be damaged too. */
        private final List<long[]> suspects = new ArrayList<>();
        private final String firstWhere = where.get();
        boolean completeAfterBad;
        boolean untied;
        int blocks;

        /** The block in {@code buf[0, n)}, which {@link #reader} checked. */
        void add(int n, boolean intact) {
            blocks++;
            if (intact && blocks > 1) {
                completeAfterBad = true;
            }
            int end = reader.intactEnd();
            ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
            for (int at = reader.firstRecord(); at < end; at += bb.getInt(at + LENGTH)) {
                note(bb, at);
            }
            if (!intact) {
                reader.walkPastDamage(buf, n, new JournalBlockReader.DamageWalk() {
                    @Override
                    public void intact(int at, int length) {
                        note(bb, at);
                    }

                    @Override
                    public void badBounded(int at, int length) {
                        if (length >= HEADER_SIZE) {
                            suspects.add(new long[]{bb.getShort(at + QUEUE_ID) & 0xFFFF, bb.get(at + TYPE),
                                    bb.getLong(at + TXN)});
                        } else {
                            untied = true;
                        }
                    }

                    @Override
                    public void unbounded(int at) {
                        untied = true;
                    }
                });
            }
        }

        private void note(ByteBuffer bb, int at) {
            dropped.add(new long[]{bb.getShort(at + QUEUE_ID) & 0xFFFF, bb.get(at + TYPE), bb.getLong(at + TXN)});
        }

        void report() {
            for (long[] r : suspects) {
                // A bad record's header is tied to its queue when it names one whose dropped transactions
                // could reach it (the dropped records advance a queue by at most one each).
                StoredQueue q = queues.byId((int) r[0]);
                if (q != null && r[2] > q.txn && r[2] <= q.txn + dropped.size() + suspects.size()) {
                    dropped.add(r);
                } else {
                    untied = true;
                }
            }
            for (long[] r : dropped) {
                continuity.dropped(queues, (byte) r[1], (int) r[0], r[2]);
            }
            if (untied) {
                continuity.unattributed(queues.allById(), "bad records among the dropped blocks", () -> firstWhere);
            }
        }
    }

    /** Whether Chronicle knows of a complete document past {@code index} ({@code indexUnknown}: past the one after it). */
    private static boolean committedBeyond(SingleChronicleQueue cq, long index, boolean indexUnknown) {
        try {
            long last = cq.lastIndex();
            return index >= 0 && last > (indexUnknown ? index + 1 : index);
        } catch (Throwable t) {
            return true;
        }
    }

    /**
     * The part of a damaged block in {@code buf} past its intact run (see
     * {@link JournalBlockReader#walkPastDamage}): intact records are applied, a bad record is tied to
     * its queue where its header fits, anything else marks every queue damaged. @return records applied
     */
    private long applyPastDamage(CycleFile f, long blockStart, int n) {
        long[] applied = {0};
        reader.walkPastDamage(buf, n, new JournalBlockReader.DamageWalk() {
            @Override
            public void intact(int at, int length) {
                String bad = apply(Journal.location(f.fileNo, blockStart + at), at, length);
                if (bad != null) {
                    problems.add("record at " + where.get() + " not applied: " + bad);
                }
                applied[0]++;
            }

            @Override
            public void badBounded(int at, int length) {
                ByteBuffer bb = ByteBuffer.wrap(buf, at, length).slice();
                boolean tied = length >= HEADER_SIZE && continuity.badRecord(queues, bb.get(TYPE),
                        bb.getShort(QUEUE_ID) & 0xFFFF, bb.getLong(TXN), where);
                if (!tied) {
                    continuity.unattributed(queues.allById(), "a bad record whose header fits no queue", where);
                }
            }

            @Override
            public void unbounded(int at) {
                continuity.unattributed(queues.allById(), "a bad record whose length cannot be trusted", where);
            }
        });
        return applied[0];
    }

    /** Chronicle's own idea of the last record beyond what we could read means a hole in the last file. */
    private Path hiddenTail(SingleChronicleQueue cq, long lastGoodIndex, int lastCycle) {
        try {
            long li = cq.lastIndex();
            if (li != lastGoodIndex) {
                problems.add("last journal file has records after an unreadable gap (last readable 0x"
                        + Long.toHexString(lastGoodIndex) + ", Chronicle's last 0x" + Long.toHexString(li) + ")");
                CycleFile f = journal.newest();
                return f == null ? null : f.path;
            }
        } catch (Throwable t) {
            problems.add("cannot find the end of the last journal file: " + t);
            CycleFile f = journal.newest();
            return f == null ? null : f.path;
        }
        return null;
    }

    private static int safeCycle(ExcerptTailer tailer) {
        try {
            return tailer.cycle();
        } catch (Throwable t) {
            return Integer.MIN_VALUE;
        }
    }

    private void ensure(int n) {
        if (buf.length < n) {
            buf = new byte[Math.max(n, buf.length * 2)];
        }
    }

    /**
     * Applies the intact records of the block in {@code buf} that {@link #reader} checked, in order.
     * A record that cannot be applied (an unknown type: written by a newer version) is reported and
     * the rest applied.
     *
     * @return null, or why a record could not be applied
     */
    private String applyIntact(CycleFile f, long blockStart) {
        String problem = null;
        int end = reader.intactEnd();
        for (int at = reader.firstRecord(); at < end; ) {
            int length = ByteBuffer.wrap(buf).getInt(at + LENGTH);
            String bad = apply(Journal.location(f.fileNo, blockStart + at), at, length);
            if (bad != null && problem == null) {
                problem = bad;
            }
            at += length;
        }
        return problem;
    }

    /** Applies the intact record at {@code buf[at, at + length)}; @return null, or why it could not be applied. */
    private String apply(long location, int at, int length) {
        base = at;
        ByteBuffer bb = ByteBuffer.wrap(buf, at, length).slice();
        byte type = bb.get(TYPE);
        int qid = bb.getShort(QUEUE_ID) & 0xFFFF;
        long txn = bb.getLong(TXN);
        try {
            if (type == TYPE_CREATE) {
                bb.position(CREATE_NAME);
                String name = string(bb);
                String owner = string(bb);
                boolean carriesSeq = bb.get(VERSION) != RECORD_VERSION_1 && bb.remaining() >= 16;
                long seq = carriesSeq ? bb.getLong() : 0;
                long digest = carriesSeq ? bb.getLong() : 0;
                QueueDamage stated = bb.remaining() >= 16 ? new QueueDamage(bb.getLong(), bb.getLong()) : QueueDamage.NONE;
                StoredQueue before = queues.byId(qid);
                boolean chainKnown = before != null && name.equals(before.name) && before.seqKnown;
                if (before != null && (before.name == null || before.name.equals(name))) {
                    continuity.beforeCreate(before, txn, where);
                }
                StoredQueue q = queues.created(qid, name, bb.getLong(CREATE_MAX_MESSAGES), bb.getLong(CREATE_MAX_BYTES),
                        bb.getLong(CREATE_NEXT_POSITION), bb.getLong(CREATE_EPOCH), owner, txn, location);
                ReplayContinuity.createApplied(q, stated);
                if (!chainKnown) {
                    // A new queue, or one whose earlier records compaction deleted: its chain starts here.
                    queues.rebased(q, seq, digest);
                } else if (carriesSeq && (q.seq != seq || q.digest != digest)) {
                    // Replay holds this queue's earlier records and folded them into another digest
                    // than the one written here: one of them was lost. Keep the recomputed one, so
                    // the copy does not compare equal to an intact one.
                    continuity.digestDiffers(q, seq, digest, txn, where);
                }
                return null;
            }
            if (type < TYPE_CREATE || type > TYPE_COMMIT) {
                return "unknown record type " + type;
            }
            StoredQueue q = queues.byId(qid);
            if (q == null) {
                if (type == TYPE_DROP) {
                    return null;
                }
                q = queues.placeholder(qid);
            }
            continuity.before(q, type, txn, where);
            switch (type) {
                case TYPE_PUT, TYPE_COPY -> {
                    long position = bb.getLong(POSITION);
                    int idLen = bb.get(ID_LENGTH) & 0xFF;
                    int hash = LiveIdTable.hash(buf, base + ID, idLen);
                    long notBefore = bb.getLong(ID + idLen + 1);
                    int stateLen = bb.getInt(ID + idLen + 9);
                    int bodyLen = bb.getInt(ID + idLen + AFTER_ID_FIXED + stateLen);
                    if (ID + idLen + AFTER_ID_FIXED + stateLen + 4 + (long) bodyLen != length) {
                        return "inconsistent " + typeName(type) + " lengths";
                    }
                    int slot = type == TYPE_COPY ? q.index.findByPosition(hash, position) : -1;
                    if (slot >= 0) {
                        queues.copied(q, slot, location, length, notBefore);
                    } else {
                        long txnAfter = type == TYPE_COPY ? q.txn : txn;
                        int old = -1;
                        if (type == TYPE_PUT) {
                            // Only a replacing PUT can meet a live message with its id: kill the old version.
                            old = findById(q, hash, idLen);
                            if (old >= 0) {
                                queues.deleted(q, old, txn);
                            }
                        }
                        queues.put(q, position, location, length, bodyLen, notBefore, hash, txnAfter);
                        if (old < 0 && idLen > 0 && buf[base + ID] == 0) {
                            q.systemRecords++; // as QueueStore.put counts it
                        }
                        if (type == TYPE_PUT) {
                            q.applied(TYPE_PUT, QueueDigest.crc(buf, base + ID, idLen),
                                    QueueDigest.crc(buf, base + ID + idLen, length - ID - idLen));
                            q.outcome(q.seq, org.jameskvs.protocol.Status.OK, position);
                        }
                    }
                }
                case TYPE_DELETE -> {
                    int slot = find(q, bb);
                    if (slot >= 0) {
                        queues.deleted(q, slot, txn);
                        if ((bb.get(ID_LENGTH) & 0xFF) > 0 && buf[base + ID] == 0) {
                            q.systemRecords--;
                        }
                    } else {
                        q.txn = txn;
                    }
                    int idLen = bb.get(ID_LENGTH) & 0xFF;
                    q.applied(TYPE_DELETE, QueueDigest.crc(buf, base + ID, idLen), 0);
                    q.outcome(q.seq, org.jameskvs.protocol.Status.OK, 0);
                }
                case TYPE_REPLACE -> {
                    int slot = find(q, bb);
                    int idLen = bb.get(ID_LENGTH) & 0xFF;
                    if (slot >= 0) {
                        queues.replaced(q, slot, location, bb.getLong(ID + idLen + 1), txn);
                    } else {
                        q.txn = txn;
                    }
                    q.applied(TYPE_REPLACE, QueueDigest.crc(buf, base + ID, idLen),
                            QueueDigest.crc(buf, base + ID + idLen, length - ID - idLen));
                    q.outcome(q.seq, org.jameskvs.protocol.Status.OK, 0);
                }
                case TYPE_CLEAR -> {
                    queues.cleared(q, txn);
                    q.applied(TYPE_CLEAR, 0, 0);
                    q.outcome(q.seq, org.jameskvs.protocol.Status.OK, 0);
                }
                case TYPE_SKIP -> {
                    if (bb.getLong(SKIP_SEQ) == q.seq + 1) {
                        q.refused(bb.get(SKIP_OP), org.jameskvs.protocol.Status.fromCode(bb.getShort(SKIP_STATUS) & 0xFFFF));
                    }
                }
                case TYPE_REBASE -> {
                    queues.rebased(q, bb.getLong(REBASE_SEQ), bb.getLong(REBASE_DIGEST));
                    if (length >= REBASE_LENGTH) {
                        queues.positionsRebased(q, bb.getLong(REBASE_NEXT_POSITION));
                    }
                }
                case TYPE_COMMIT -> queues.committed(q, bb.getLong(COMMIT_SEQ), location);
                case TYPE_DROP -> queues.dropped(q);
                case TYPE_OWNER -> {
                    bb.position(OWNER_NAME);
                    queues.ownerChanged(q, bb.getLong(OWNER_EPOCH), string(bb), txn);
                }
                default -> {
                    return "unknown record type " + type;
                }
            }
            return null;
        } catch (RuntimeException e) {
            return "malformed " + typeName(type) + " record: " + e;
        }
    }

    /** By id bytes (a replacing PUT carries the id, not the old position); reads the journal only on a hash match. */
    private int findById(StoredQueue q, int hash, int idLen) {
        byte[] id = java.util.Arrays.copyOfRange(buf, base + ID, base + ID + idLen);
        return q.index.find(hash, slot -> {
            try {
                return journal.reads.idEquals(q.index.location(slot), id);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private int find(StoredQueue q, ByteBuffer bb) {
        int idLen = bb.get(ID_LENGTH) & 0xFF;
        return q.index.findByPosition(LiveIdTable.hash(buf, base + ID, idLen), bb.getLong(POSITION));
    }

    private String string(ByteBuffer bb) {
        int len = bb.getShort() & 0xFFFF;
        String s = new String(buf, base + bb.position(), len, StandardCharsets.UTF_8);
        bb.position(bb.position() + len);
        return s;
    }

    /**
     * Moves a damaged last file to {@code quarantine/} (kept for inspection) and re-appends its
     * first {@code goodBlocks} blocks, verbatim, to the journal: the blocks replay applied (intact
     * ones, and damaged ones it did not take for the torn tail, whose damage the next replay finds
     * again), so the journal then ends with complete blocks and the dropped tail can never come back
     * at a later restart.
     *
     * @return the number of blocks re-appended
     */
    static long quarantineAndRepair(StoreConfig config, Path damaged, long goodBlocks) throws IOException,
            JournalException {
        Path qdir = config.directory().resolve("quarantine")
                .resolve(damaged.getFileName() + "-" + System.currentTimeMillis());
        Files.createDirectories(qdir);
        Files.move(damaged, qdir.resolve(damaged.getFileName()));
        LOG.error("Journal file {} moved to {}; re-appending its {} intact blocks", damaged.getFileName(), qdir,
                goodBlocks);
        long copied = 0;
        JournalBlockReader reader = new JournalBlockReader();
        byte[] b = new byte[64 << 10];
        try (Journal journal = Journal.open(config);
             SingleChronicleQueue dq = SingleChronicleQueueBuilder.binary(qdir)
                     .rollCycle(config.tuning().rollCycle()).blockSize(config.tuning().blockSize()).build();
             ExcerptTailer t = dq.createTailer()) {
            journal.chronicle().refreshDirectoryListing();
            while (copied < goodBlocks) {
                try (DocumentContext dc = t.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> bytes = dc.wire().bytes();
                    int n = (int) bytes.readRemaining();
                    if (b.length < n) {
                        b = new byte[n];
                    }
                    bytes.read(b, 0, n);
                    journal.appendDocument(b, n);
                    copied++;
                }
            }
            journal.force();
        }
        return copied;
    }
}
