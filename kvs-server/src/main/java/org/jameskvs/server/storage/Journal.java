package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static org.jameskvs.server.storage.JournalRecordDescriptor.*;

/**
 * The single journal of all queues: a Chronicle Queue written with raw bytes (no self-describing
 * wire), one document per block of records ({@link JournalBlockDescriptor}, records in the layout
 * of {@link JournalRecordDescriptor}), read back with positioned reads.
 *
 * <p>A <i>location</i> is {@code fileNo << 40 | file offset of the record}: the offset is the
 * record's first byte in its cycle file (inside its block), so reads need neither a tailer nor
 * Chronicle's index; {@code fileNo} is a small in-memory number of the {@link CycleFile}. 0 is
 * never a location.
 *
 * <p>Writes go to the open block ({@link #append}) until {@link #endBlock} closes it; the store
 * closes it at every commit.
 */
final class Journal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
    static final int OFFSET_BITS = 40;
    private static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;
    private static final long FREE_SPACE_RECHECK_MILLIS = 1000;

    private final StoreConfig config;
    private final SingleChronicleQueue queue;
    private final TimeProvider time;
    private ExcerptAppender appender;
    /** The open block (a Chronicle document being written), its bytes, where it starts and its file; null between blocks. */
    private DocumentContext block;
    private Bytes<?> blockBytes;
    private long blockStart;
    private CycleFile blockFile;
    private final CRC32C crc = new CRC32C();
    private final ByteBuf head = Unpooled.buffer(1024);
    private final ByteBuf mid = Unpooled.buffer(8);
    private final List<CycleFile> byNo = new ArrayList<>();
    private final TreeMap<Integer, CycleFile> byCycle = new TreeMap<>();
    private long usedBytes;
    private long freeSpace = -1;
    private long freeSpaceCheckedAt;
    private long writtenSinceFreeCheck;
    private boolean newFileSinceSync;
    /** The file the last record went to, for {@link #fileForCycle}'s fast path. */
    private CycleFile lastWritten;
    private final JournalPageWarmer warmer;
    /** Room behind the pages a record is about to be written to (SIGBUS on a full disk otherwise). */
    private final BackedPages backed = new BackedPages(PagePopulator.create());
    private final DeadFileRemover remover;
    /** The chunk of Chronicle's mapping published to the warmer (reserved by {@link #WARMER}), and where it lies. */
    /** The writer's mapping as published to the warmer (null without a warmer). */
    private final PublishedMapping published;
    /** Reads of records by location. */
    final JournalReads reads = new JournalReads(this::file);

    private Journal(StoreConfig config) {
        this.config = config;
        JournalTuning t = config.tuning();
        this.time = t.timeProvider();
        this.queue = SingleChronicleQueueBuilder.binary(config.directory())
                .rollCycle(t.rollCycle())
                .timeProvider(t.timeProvider())
                .blockSize(t.blockSize())
                .build();
        byNo.add(null); // fileNo 0 is never used, so location 0 means "none"
        this.warmer = t.warmAheadBytes() > 0
                ? new JournalPageWarmer(t.warmAheadBytes(), "kvs-journal-warmer-" + config.directory().getFileName(),
                        config.fsyncPolicy() != FsyncPolicy.NONE)
                : null;
        this.published = warmer != null ? new PublishedMapping() : null;
        this.remover = new DeadFileRemover("kvs-journal-remover-" + config.directory().getFileName());
    }

    static Journal open(StoreConfig config) throws IOException {
        Files.createDirectories(config.directory());
        DeadFileRemover.removeLeftovers(config.directory());
        return new Journal(config);
    }

    SingleChronicleQueue chronicle() {
        return queue;
    }

    TimeProvider time() {
        return time;
    }

    /** Largest record: it must fit in a block of its own, and a block in one Chronicle document. */
    long maxRecordBytes() {
        return maxBlockBytes() - JournalBlockDescriptor.HEADER_SIZE;
    }

    // ---- locations and files

    static long location(int fileNo, long offset) {
        return (long) fileNo << OFFSET_BITS | offset;
    }

    static long offset(long location) {
        return location & OFFSET_MASK;
    }

    CycleFile file(long location) {
        return byNo.get((int) (location >>> OFFSET_BITS));
    }

    /** The file of a cycle, registered on first sight (by a write or by recovery). */
    CycleFile fileForCycle(int cycle, File file) {
        CycleFile f = byCycle.get(cycle);
        if (f == null) {
            f = new CycleFile(byNo.size(), cycle, file.toPath());
            byNo.add(f);
            byCycle.put(cycle, f);
            newFileSinceSync = true;
        }
        lastWritten = f;
        return f;
    }

    /** The file the appender writes to; every record but the first of a cycle takes the fast path (no boxing, no tree lookup). */
    private CycleFile fileOfAppender() {
        int cycle = appender.cycle();
        CycleFile last = lastWritten;
        if (last != null && last.cycle == cycle && byNo.get(last.fileNo) == last) {
            return last;
        }
        return fileForCycle(cycle, appender.currentFile());
    }

    CycleFile oldest() {
        var e = byCycle.firstEntry();
        return e == null ? null : e.getValue();
    }

    CycleFile newest() {
        var e = byCycle.lastEntry();
        return e == null ? null : e.getValue();
    }

    Iterable<CycleFile> files() {
        return byCycle.values();
    }

    /** Wall-clock time at which a cycle ended (its file stopped receiving new records). */
    long cycleEndMillis(int cycle) {
        return (cycle + 1L) * config.tuning().rollCycle().lengthInMillis();
    }

    void addUsed(CycleFile f, long newEnd) {
        if (newEnd > f.end) {
            if (f.end == 0) {
                f.headerBytes = newEnd;
            }
            usedBytes += newEnd - f.end;
            f.end = newEnd;
        }
    }

    long usedBytes() {
        return usedBytes;
    }

    void ref(long location, long bytes) {
        CycleFile f = file(location);
        f.liveRefs++;
        f.liveBytes += bytes;
    }

    void unref(long location, long bytes) {
        if (location == 0) {
            return;
        }
        CycleFile f = file(location);
        f.liveRefs--;
        f.liveBytes -= bytes;
    }

    // ---- writing

    /** Clears the scratch header buffer and writes the common header (CRC and length filled by append). */
    ByteBuf begin(byte type, int queueId, long txn) {
        head.clear();
        head.writeInt(0);
        head.writeInt(0);
        head.writeByte(type);
        head.writeByte(RECORD_VERSION);
        head.writeShort(queueId);
        head.writeLong(txn);
        return head;
    }

    /** Scratch buffer for a small piece between two caller buffers (e.g. the body length). */
    ByteBuf mid() {
        mid.clear();
        return mid;
    }

    /**
     * Appends one record made of {@code head} (from {@link #begin}) followed by the readable bytes of
     * the optional pieces to the open block (opening one if needed); the pieces' reader indexes are
     * not moved. The record is in the mapped file at once (reads by location see it) but becomes part
     * of the journal only when its block is closed ({@link #endBlock}).
     *
     * @return the record's location
     */
    long append(ByteBuf header, ByteBuf a, ByteBuf b, ByteBuf c) throws JournalException {
        return append(header, a, b, c, header.getByte(TYPE) == TYPE_PUT);
    }

    /**
     * {@link #append(ByteBuf, ByteBuf, ByteBuf, ByteBuf)}, saying whether the record is growth (a PUT of
     * mail: it stops at the limits, see {@link #checkSpace}) or may use the reserve.
     */
    long append(ByteBuf header, ByteBuf a, ByteBuf b, ByteBuf c, boolean growth) throws JournalException {
        long length = (long) header.readableBytes() + RecordBytes.readable(a) + RecordBytes.readable(b)
                + RecordBytes.readable(c);
        if (length > maxRecordBytes()) {
            throw new JournalException(Status.BAD_REQUEST, "record of " + length + " bytes exceeds the journal's "
                    + maxRecordBytes(), null);
        }
        checkSpace(length, growth);
        header.setInt(LENGTH, (int) length);
        crc.reset();
        crc.update(header.array(), header.arrayOffset() + 4, header.readableBytes() - 4);
        RecordBytes.updateCrc(crc, a);
        RecordBytes.updateCrc(crc, b);
        RecordBytes.updateCrc(crc, c);
        header.setInt(CRC, (int) crc.getValue());
        if (block != null && blockBytes.writePosition() + length - blockStart > maxBlockBytes()) {
            endBlock();
        }
        if (block == null) {
            beginBlock();
        }
        Bytes<?> bytes = blockBytes;
        long start = bytes.writePosition();
        ensureRoom(bytes, start, start + length);
        try {
            RecordBytes.copy(bytes, header);
            RecordBytes.copy(bytes, a);
            RecordBytes.copy(bytes, b);
            RecordBytes.copy(bytes, c);
            if (bytes.writePosition() - start != length) {
                throw new IllegalStateException("wrote " + (bytes.writePosition() - start) + " of " + length);
            }
        } catch (Throwable t) {
            // Only this record goes: the block's earlier records, already applied to the index, stay.
            try {
                bytes.writePosition(start);
            } catch (Throwable t2) {
                t.addSuppressed(t2);
            }
            throw failure("write a journal record", t);
        }
        CycleFile f = blockFile;
        f.dirty = true;
        addUsed(f, start + length);
        writtenSinceFreeCheck += length;
        return location(f.fileNo, start);
    }

    /** DISK_FULL, before anything is written, when the file system has no room behind offsets {@code [from, to)} ({@link BackedPages}). */
    private void ensureRoom(Bytes<?> bytes, long from, long to) throws JournalException {
        String noRoom = backed.ensure(bytes, from, to);
        if (noRoom != null) {
            freeSpace = -1; // look at the file system again at the next write
            throw new JournalException(Status.DISK_FULL, noRoom, null);
        }
    }

    /** Largest block: Chronicle takes a document of at most its overlap size. */
    private long maxBlockBytes() {
        return queue.overlapSize() - 64;
    }

    private void beginBlock() throws JournalException {
        if (appender == null) {
            appender = queue.createAppender();
        }
        DocumentContext dc;
        try {
            dc = appender.writingDocument();
        } catch (Throwable t) {
            throw failure("open a journal block", t);
        }
        try {
            Bytes<?> bytes = dc.wire().bytes();
            blockStart = bytes.writePosition();
            ensureRoom(bytes, blockStart, blockStart + JournalBlockDescriptor.HEADER_SIZE);
            bytes.write(JournalBlockDescriptor.HEADER);
            blockFile = fileOfAppender();
            blockBytes = bytes;
            block = dc;
        } catch (Throwable t) {
            try {
                dc.rollbackOnClose();
                dc.close();
            } catch (Throwable t2) {
                t.addSuppressed(t2);
            }
            if (t instanceof JournalException refused) {
                throw refused; // no room behind the block's first page: DISK_FULL, nothing written
            }
            throw failure("open a journal block", t);
        }
        blockFile.dirty = true;
        addUsed(blockFile, blockStart + JournalBlockDescriptor.HEADER_SIZE);
        writtenSinceFreeCheck += JournalBlockDescriptor.HEADER_SIZE + 4;
    }

    /**
     * Closes the open block, if any: from here on its records are part of the journal (a reader, a
     * restart sees them). Called at every group commit, and before anything that relies on records
     * being in the journal (fsync, deleting a file, closing).
     *
     * @throws JournalException when Chronicle cannot complete the document: the block's records were
     *                          applied to the index but may not be in the journal, so the caller must
     *                          not acknowledge them (the server closes the connections instead)
     */
    void endBlock() throws JournalException {
        DocumentContext dc = block;
        if (dc == null) {
            return;
        }
        Bytes<?> bytes = blockBytes;
        block = null;
        blockBytes = null;
        if (published != null && warmer.populates()) {
            published.note(bytes);
        }
        try {
            if (bytes.writePosition() == blockStart + JournalBlockDescriptor.HEADER_SIZE) {
                dc.rollbackOnClose(); // its only record failed: a block is never empty
            }
            dc.close();
        } catch (Throwable t) {
            throw failure("complete a journal block", t);
        }
    }

    /** Re-appends a document verbatim as a block of its own (recovery's repair of a damaged last file). */
    void appendDocument(byte[] document, int length) throws JournalException {
        endBlock();
        checkSpace(length, false);
        if (appender == null) {
            appender = queue.createAppender();
        }
        try (DocumentContext dc = appender.writingDocument()) {
            Bytes<?> bytes = dc.wire().bytes();
            long start = bytes.writePosition();
            bytes.write(document, 0, length);
            CycleFile f = fileOfAppender();
            f.dirty = true;
            addUsed(f, start + length);
        } catch (Throwable t) {
            throw failure("re-append a journal block", t);
        }
    }

    private JournalException failure(String what, Throwable t) {
        Status s = isDiskProblem(t) ? Status.DISK_FULL : Status.STORAGE_ERROR;
        LOG.error("Journal failed to {} ({}): {}", what, s, t.toString());
        return new JournalException(s, "failed to " + what + ": " + t, t);
    }

    /** IO errors (ENOSPC, EIO) and faults on the mapped file (SIGBUS surfaces as InternalError) mean the disk. */
    private static boolean isDiskProblem(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IOException || c instanceof InternalError
                    || c.getClass().getSimpleName().contains("IORuntime")) {
                return true;
            }
        }
        return false;
    }

    /**
     * DISK_FULL before writing, rather than a fault on the mapped file (SIGBUS) half-way through.
     *
     * <p>Only a PUT of mail ({@code growth}) stops at the limits ({@code journal.maxBytes}, {@code
     * disk.minFreeBytes}). Every other record (DELETE, REPLACE, CLEAR, the SKIP of a refused sequenced
     * mutation, the compactor's COPY and checkpoints, a PUT of a system record: the replicating writer's
     * lease and membership record) may go on into a reserve past them: an eighth of
     * {@code journal.maxBytes} beyond it (plus the newest file's header), and down to half of
     * {@code disk.minFreeBytes}. Those records
     * are what makes room (a delivered mail's DELETE lets its file die, compaction moves the survivors
     * forward) or keep the queue's owner alive; refused like PUTs, a full node could never drain
     * without a restart on more space.
     */
    private void checkSpace(long length, boolean growth) throws JournalException {
        long max = config.maxJournalBytes();
        CycleFile newest = growth ? null : newest();
        // The reserve, plus the newest file's header: a file that begins while the journal is at its
        // limit (the roll cycle's next file) would otherwise take the whole reserve for its header and
        // refuse the very deletes that let the older files go (FullNodesDrainTest).
        long limit = growth ? max : max + max / 8 + (newest == null ? 0 : newest.headerBytes);
        if (max > 0 && usedBytes + length > limit) {
            throw new JournalException(Status.DISK_FULL, "journal holds " + usedBytes + " bytes, limit " + limit
                    + (growth ? "" : " (journal.maxBytes and its reserve)"), null);
        }
        long minFree = growth ? config.minFreeDiskBytes() : config.minFreeDiskBytes() / 2;
        long estimate = freeSpace - writtenSinceFreeCheck;
        // The clock is read once per block (its first record), not per record: a block lasts microseconds.
        if (freeSpace < 0 || estimate - length < minFree + (16L << 20)
                || block == null && time.currentTimeMillis() - freeSpaceCheckedAt >= FREE_SPACE_RECHECK_MILLIS) {
            try {
                freeSpace = Files.getFileStore(config.directory()).getUsableSpace();
            } catch (IOException e) {
                throw new JournalException(Status.STORAGE_ERROR, "cannot stat the journal's file system: " + e, e);
            }
            freeSpaceCheckedAt = time.currentTimeMillis();
            writtenSinceFreeCheck = 0;
            estimate = freeSpace;
        }
        if (estimate - length < minFree) {
            throw new JournalException(Status.DISK_FULL, "free disk " + estimate + " bytes, minimum "
                    + minFree + (growth ? "" : " (half of disk.minFreeBytes: the reserve)"), null);
        }
    }

    /** Tells the page warmer where the writer is, and its mapping there (once per block of requests, at commit). */
    void announceWritePosition() {
        CycleFile f = lastWritten;
        if (warmer != null && f != null && byNo.get(f.fileNo) == f) {
            warmer.writing(f.path, f.end, published == null ? null : published.current());
        }
    }

    // ---- durability and space

    /** Closes the open block, then fsyncs every file written since the last call (fsync also flushes pages dirtied through mmap). */
    void force() throws IOException, JournalException {
        endBlock();
        for (CycleFile f : byCycle.values()) {
            if (f.dirty) {
                f.channel().force(false);
                f.dirty = false;
            }
        }
        if (newFileSinceSync) {
            // A new cycle file's directory entry must be durable too.
            try (FileChannel dir = FileChannel.open(config.directory(), StandardOpenOption.READ)) {
                dir.force(true);
            } catch (IOException e) {
                LOG.debug("directory fsync not supported here: {}", e.toString());
            }
            newFileSinceSync = false;
        }
        FsyncObserver observer = FsyncObserver.Installed.observer;
        if (observer != null) {
            Map<Path, Long> ends = new java.util.LinkedHashMap<>();
            for (CycleFile f : byCycle.values()) {
                ends.put(f.path, f.end);
            }
            observer.fsynced(config.directory(), ends);
        }
    }

    /**
     * Deletes a cycle file (the caller checked nothing live is in it) and tells Chronicle. The open
     * block is closed first: it may hold the COPY records that made the file's messages movable.
     * The file leaves the journal at once; its space is freed by {@link DeadFileRemover}'s thread.
     */
    void delete(CycleFile f) throws IOException, JournalException {
        endBlock();
        f.closeChannel();
        remover.remove(f.path);
        byCycle.remove(f.cycle);
        byNo.set(f.fileNo, null);
        usedBytes -= f.end;
        queue.refreshDirectoryListing();
        LOG.info("Deleted journal file {}", f.path.getFileName());
    }

    /** Bytes of the journal's cycle files on disk (apparent size: Chronicle grows files chunk by chunk). */
    long bytesOnDisk() {
        try (Stream<Path> s = Files.list(config.directory())) {
            return s.filter(p -> p.getFileName().toString().endsWith(".cq4")).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            return usedBytes;
        }
    }

    /**
     * Lets another thread append from now on: a Chronicle appender belongs to the thread that
     * created it, so the one used here (recovery's damage records, on the opening thread) is closed
     * and the next append creates its own. The open block is closed first.
     */
    void releaseAppender() throws JournalException {
        endBlock();
        if (appender != null) {
            appender.close();
            appender = null;
        }
    }

    @Override
    public void close() {
        try {
            endBlock();
        } catch (JournalException e) {
            LOG.error("The last journal block could not be completed at close: {}", e.getMessage());
        }
        if (warmer != null) {
            warmer.close();
            if (published != null) {
                published.release();
            }
        }
        for (Iterator<CycleFile> it = byCycle.values().iterator(); it.hasNext(); ) {
            it.next().closeChannel();
        }
        if (appender != null) {
            appender.close();
        }
        queue.close();
        remover.close();
    }
}
