package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;

import java.util.zip.CRC32C;

/**
 * The rolling content digest of a queue: one 64-bit value folded over every data mutation it
 * applied, in order: {@code digest' = next(digest, seq, op, CRC32C(id), CRC32C(content))}, where
 * {@code op} is the journal record type (PUT, DELETE, REPLACE, CLEAR) and {@code content} the bytes
 * the mutation carries after the id (priority, notBefore, state blob and, for a PUT, body blob;
 * nothing for DELETE and CLEAR). Positions, transaction numbers and owner changes are not in it, so
 * two copies that applied the same mutations in the same order have the same digest whatever their
 * journals look like; a copy that lost one (a record gone from an older journal file) has another
 * one from that mutation on (Kafka compares logs by offset and epoch, BookKeeper by entry id; a
 * count alone cannot see a hole whose neighbours were renumbered, the digest can).
 *
 * <p>The live path and replay compute it from the same bytes: live from the request's buffers,
 * replay from the record ({@link JournalRecordDescriptor}, bytes {@code [ID + L, length)}).
 */
final class QueueDigest {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private QueueDigest() {
    }

    /** The digest after one more mutation. */
    static long next(long digest, long seq, int op, int idCrc, int contentCrc) {
        long h = mix(digest ^ seq * GOLDEN);
        h = mix(h + (op & 0xFF));
        return mix(h ^ ((long) idCrc << 32 | (contentCrc & 0xFFFFFFFFL)));
    }

    /** Murmur3's 64-bit finaliser: every input bit reaches every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }

    static int crc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /** CRC32C of what a PUT (body != null) or REPLACE (body == null) carries after its id, as the record lays it out. */
    static int contentCrc(int priority, long notBefore, ByteBuf state, ByteBuf body) {
        CRC32C c = new CRC32C();
        byte[] fixed = new byte[13];
        fixed[0] = (byte) priority;
        putLong(fixed, 1, notBefore);
        putInt(fixed, 9, state.readableBytes());
        c.update(fixed, 0, 13);
        update(c, state);
        if (body != null) {
            putInt(fixed, 0, body.readableBytes());
            c.update(fixed, 0, 4);
            update(c, body);
        }
        return (int) c.getValue();
    }

    private static void update(CRC32C c, ByteBuf b) {
        if (b.readableBytes() == 0) {
            return;
        }
        if (b.hasArray()) {
            c.update(b.array(), b.arrayOffset() + b.readerIndex(), b.readableBytes());
        } else if (b.nioBufferCount() == 1) {
            c.update(b.nioBuffer(b.readerIndex(), b.readableBytes()));
        } else {
            for (java.nio.ByteBuffer bb : b.nioBuffers(b.readerIndex(), b.readableBytes())) {
                c.update(bb);
            }
        }
    }

    private static void putLong(byte[] b, int at, long v) {
        for (int i = 7; i >= 0; i--) {
            b[at + i] = (byte) v;
            v >>>= 8;
        }
    }

    private static void putInt(byte[] b, int at, int v) {
        for (int i = 3; i >= 0; i--) {
            b[at + i] = (byte) v;
            v >>>= 8;
        }
    }
}
