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
 * MIN table from the disk queue"), one block (Chronicle document) at a time. Every record's CRC32C
 * is checked before any record of its block is applied ({@link JournalBlockReader}), so a bad record
 * is never half-applied:
 * <ul>
 * <li>a block with a bad record in the <b>last</b> file is a torn or damaged tail: it is dropped
 * <i>whole</i> and replay stops there. A block is one group commit, whose responses were sent only
 * after it was closed (and, with {@code fsync.policy=batch}, synced), so the state rebuilt is the
 * state after a complete commit, never part of one. The file is then <i>repaired</i> (see
 * {@link #quarantineAndRepair}) so that new blocks are never appended behind garbage;</li>
 * <li>a bad record in an <b>older</b> file is damage to data that was complete: the intact records
 * of its block before it are applied, it and the rest of its block (whose record boundaries can no
 * longer be trusted) are skipped and reported, and replay goes on.</li>
 * </ul>
 * Problems are logged and returned in the {@link Report}; nothing here throws for a bad file.
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
    private byte[] buf = new byte[64 << 10];
    /** Offset in {@code buf} of the record being applied. */
    private int base;
    private final List<String> problems = new ArrayList<>();

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
                    if (cycle != currentCycle) {
                        currentCycle = cycle;
                        goodInCycle = 0;
                    }
                    Bytes<?> bytes = dc.wire().bytes();
                    long start = bytes.readPosition();
                    long n = bytes.readRemaining();
                    CycleFile f = journal.fileForCycle(cycle, file);
                    bad = n > Integer.MAX_VALUE - 16 ? "document of " + n + " bytes" : null;
                    if (bad == null) {
                        ensure((int) n);
                        bytes.read(buf, 0, (int) n);
                        bad = reader.check(buf, (int) n);
                    }
                    boolean lastFile = cycle >= lastCycle;
                    if (bad == null || !lastFile) {
                        // Older file: the intact records before a bad one still count (see the class comment).
                        String unapplied = applyIntact(f, start);
                        records += reader.intactRecords();
                        bad = bad != null ? bad : unapplied;
                        journal.addUsed(f, start + n);
                    }
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
                String where = (file != null ? file.getName() : "cycle " + cycle) + " index 0x" + Long.toHexString(index);
                if (cycle >= lastCycle) {
                    problems.add("bad block in the last journal file at " + where + ": " + bad
                            + "; replay stopped there, that whole block and the rest of that file are dropped");
                    damaged = file != null ? file.toPath() : null;
                    goodInDamaged = goodInCycle;
                    break;
                }
                skipped++;
                problems.add("bad record skipped in older journal file at " + where + ": " + bad
                        + "; the " + reader.intactRecords() + " record(s) of its block before it were applied, the rest of the block skipped");
                if (!(bad.startsWith("unreadable"))) {
                    continue;
                }
                try {
                    if (!tailer.moveToCycle(cq.nextCycle(cycle, net.openhft.chronicle.queue.TailerDirection.FORWARD))) {
                        break;
                    }
                } catch (Throwable t) {
                    problems.add("cannot move past " + where + ": " + t + "; replay stopped");
                    break;
                }
            }
        } catch (Throwable t) {
            problems.add("journal replay failed: " + t);
        }
        if (damaged == null && records > 0) {
            damaged = hiddenTail(cq, lastGoodIndex, lastCycle);
            if (damaged != null) {
                goodInDamaged = goodInCycle;
            }
        }
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
                StoredQueue q = queues.created(qid, name, bb.getLong(CREATE_MAX_MESSAGES), bb.getLong(CREATE_MAX_BYTES),
                        bb.getLong(CREATE_NEXT_POSITION), bb.getLong(CREATE_EPOCH), owner, txn, location);
                return null;
            }
            if (type < TYPE_CREATE || type > TYPE_COPY) {
                return "unknown record type " + type;
            }
            StoredQueue q = queues.byId(qid);
            if (q == null) {
                if (type == TYPE_DROP) {
                    return null;
                }
                q = queues.placeholder(qid);
            }
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
                }
                case TYPE_REPLACE -> {
                    int slot = find(q, bb);
                    int idLen = bb.get(ID_LENGTH) & 0xFF;
                    if (slot >= 0) {
                        queues.replaced(q, slot, location, bb.getLong(ID + idLen + 1), txn);
                    } else {
                        q.txn = txn;
                    }
                }
                case TYPE_CLEAR -> queues.cleared(q, txn);
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
                return journal.idEquals(q.index.location(slot), id);
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
     * first {@code goodBlocks} blocks, verbatim, to the journal: the journal then ends with intact
     * blocks, and the dropped tail can never come back at a later restart.
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
                    if (reader.check(b, n) != null) {
                        break;
                    }
                    journal.appendDocument(b, n);
                    copied++;
                }
            }
            journal.force();
        }
        return copied;
    }
}
