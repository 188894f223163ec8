package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.ContentDigest;

/**
 * The rolling content digest of a queue (the definition: kvs-protocol's {@link ContentDigest},
 * which the replicating writer computes too): one 64-bit value folded over every data mutation it
 * applied, in order. Positions, transaction numbers and owner changes are not in it, so two copies
 * that applied the same mutations in the same order have the same digest whatever their journals
 * look like; a copy that lost one (a record gone from an older journal file) has another one from
 * that mutation on (Kafka compares logs by offset and epoch, BookKeeper by entry id; a count alone
 * cannot see a hole whose neighbours were renumbered, the digest can).
 *
 * <p>The live path and replay compute it from the same bytes: live from the request's buffers,
 * replay from the record ({@link JournalRecordDescriptor}, bytes {@code [ID + L, length)}).
 */
final class QueueDigest {
    private QueueDigest() {
    }

    /** The digest after one more mutation. */
    static long next(long digest, long seq, int op, int idCrc, int contentCrc) {
        return ContentDigest.next(digest, seq, op, idCrc, contentCrc);
    }

    static int crc(byte[] b, int off, int len) {
        return ContentDigest.crc(b, off, len);
    }

    /** CRC32C of what a PUT (body != null) or REPLACE (body == null) carries after its id, as the record lays it out. */
    static int contentCrc(int priority, long notBefore, ByteBuf state, ByteBuf body) {
        return ContentDigest.contentCrc(priority, notBefore, state, body);
    }
}
