package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import org.jameskvs.protocol.MessageRecord;
import org.jameskvs.protocol.MessageRecordDescriptor;
import org.jameskvs.protocol.ReservedIds;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.jameskvs.server.storage.JournalRecordDescriptor.*;

/**
 * Encodes each record type into the {@link Journal} (layouts in {@link JournalRecordDescriptor}),
 * and emits a live message as a wire {@code message record} straight from the journal.
 */
final class JournalRecords {
    private final Journal journal;
    /** Holds one message record while compaction copies it forward (direct: released by {@link #close()}). */
    final ByteBuf copyBuffer = Unpooled.directBuffer(64 << 10);

    JournalRecords(Journal journal) {
        this.journal = journal;
    }

    /** The store closes: its off-heap buffer goes (a store reopened in the same JVM would leak one per open). */
    void close() {
        if (copyBuffer.refCnt() > 0) {
            copyBuffer.release();
        }
    }

    /** The queue's CREATE checkpoint: its metadata as it is now, and its damage if any. */
    long create(StoredQueue q) throws JournalException {
        return create(q.id, q.name, q.maxMessages, q.maxBytes, q.nextPosition, q.epoch, q.owner, q.txn, q.seq,
                q.digest, q.damage);
    }

    long create(int qid, String name, long maxMessages, long maxBytes, long nextPosition, long epoch, String owner,
                long txn, long seq, long digest, QueueDamage damage) throws JournalException {
        ByteBuf h = journal.begin(TYPE_CREATE, qid, txn);
        h.writeLong(maxMessages).writeLong(maxBytes).writeLong(nextPosition).writeLong(epoch);
        writeString(h, name);
        writeString(h, owner);
        h.writeLong(seq).writeLong(digest);
        if (damage.isDamaged()) {
            h.writeLong(damage.fromTxn()).writeLong(damage.toTxn());
        }
        return journal.append(h, null, null, null);
    }

    long put(int qid, long txn, long position, byte[] id, int priority, long notBefore, ByteBuf state, ByteBuf body)
            throws JournalException {
        // From POSITION on, the wire's message record: GET and READ copy it as it is.
        ByteBuf h = journal.begin(TYPE_PUT, qid, txn);
        MessageRecord.writeHead(h, position, id, priority, notBefore, state.readableBytes());
        ByteBuf m = journal.mid();
        MessageRecord.writeBodyLength(m, body.readableBytes());
        // A system record (the replicating writer's lease record, rewritten every few seconds) is not
        // mail: refused at the limit, a full node's copy would be isolated for it.
        return journal.append(h, state, m, body, !ReservedIds.isReserved(id));
    }

    long delete(int qid, long txn, long position, byte[] id) throws JournalException {
        ByteBuf h = journal.begin(TYPE_DELETE, qid, txn);
        h.writeLong(position).writeByte(id.length).writeBytes(id);
        return journal.append(h, null, null, null);
    }

    long replace(int qid, long txn, long position, byte[] id, int priority, long notBefore, ByteBuf state)
            throws JournalException {
        // The message record's head: writeMessage splices its [priority, state] into the PUT's record.
        ByteBuf h = journal.begin(TYPE_REPLACE, qid, txn);
        MessageRecord.writeHead(h, position, id, priority, notBefore, state.readableBytes());
        return journal.append(h, state, null, null);
    }

    long headerOnly(byte type, int qid, long txn) throws JournalException {
        return journal.append(journal.begin(type, qid, txn), null, null, null);
    }

    long rebase(int qid, long txn, long seq, long digest, long nextPosition) throws JournalException {
        ByteBuf h = journal.begin(TYPE_REBASE, qid, txn);
        h.writeLong(seq).writeLong(digest).writeLong(nextPosition);
        return journal.append(h, null, null, null);
    }

    long skip(int qid, long txn, long seq, byte op, int status) throws JournalException {
        ByteBuf h = journal.begin(TYPE_SKIP, qid, txn);
        h.writeLong(seq).writeByte(op).writeShort(status);
        return journal.append(h, null, null, null);
    }

    long committed(int qid, long txn, long committed) throws JournalException {
        ByteBuf h = journal.begin(TYPE_COMMIT, qid, txn);
        h.writeLong(committed);
        return journal.append(h, null, null, null);
    }

    long owner(int qid, long txn, long epoch, String owner) throws JournalException {
        ByteBuf h = journal.begin(TYPE_OWNER, qid, txn);
        h.writeLong(epoch);
        writeString(h, owner);
        return journal.append(h, null, null, null);
    }

    /** COPY of a live message with its current state: @return the new location. */
    long copy(StoredQueue q, int slot) throws JournalException, IOException {
        copyBuffer.clear();
        writeMessage(q.index, slot, copyBuffer);
        return journal.append(journal.begin(TYPE_COPY, q.id, q.txn), copyBuffer, null, null);
    }

    int lastCopyLength() {
        return HEADER_SIZE + copyBuffer.readableBytes();
    }

    /** Writes the live message in {@code slot} as a wire message record, reading it from the journal. */
    void writeMessage(QueueIndex ix, int slot, ByteBuf out) throws IOException {
        long loc = ix.location(slot);
        int recordLength = ix.recordLength(slot);
        long stateLoc = ix.stateLocation(slot);
        if (stateLoc == 0) {
            // The PUT/COPY record from POSITION on is the wire message record: one positioned read.
            journal.reads.readInto(loc, POSITION, recordLength - POSITION, out);
            return;
        }
        int idLen = journal.reads.readUnsignedByte(loc, ID_LENGTH);
        journal.reads.readInto(loc, POSITION, MessageRecordDescriptor.ID_OFFSET + idLen, out);
        int replaceLength = journal.reads.readInt(stateLoc, LENGTH);
        journal.reads.readInto(stateLoc, ID + idLen, replaceLength - ID - idLen, out);
        int bodyLen = ix.bodyLength(slot);
        journal.reads.readInto(loc, bodyBlobOffset(recordLength, bodyLen), bodyLen + 4, out);
    }

    boolean idMatches(QueueIndex ix, int slot, byte[] id) {
        try {
            return journal.reads.idEquals(ix.location(slot), id);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void writeString(ByteBuf h, String s) {
        byte[] b = s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
        int len = Math.min(b.length, 0xFFFF);
        h.writeShort(len).writeBytes(b, 0, len);
    }
}
