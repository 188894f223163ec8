package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

import java.util.zip.CRC32C;

/**
 * The rolling content digest of a queue, the one definition shared by the server (which keeps it
 * per queue and answers it in OPEN and STAT) and the replicating writer (which computes the digest
 * a copy must have at each seq, to tell whether a copy that comes back can be caught up by the
 * suffix it missed). One 64-bit value folded over every sequenced data mutation, in order:
 * {@code digest' = next(digest, seq, op, CRC32C(id), CRC32C(content))}, where {@code op} is the
 * journal record type ({@link #PUT}, {@link #DELETE}, {@link #REPLACE}, {@link #CLEAR}) and
 * {@code content} the bytes the mutation carries after the id (priority, notBefore, state blob and,
 * for a PUT, body blob; nothing for DELETE and CLEAR). A sequenced mutation refused for good takes
 * its seq all the same and folds {@link #refused}. Positions, transaction numbers and owner
 * changes are not in it.
 */
public final class ContentDigest {
    /** Journal record types, as folded. */
    public static final int PUT = 2;
    public static final int DELETE = 3;
    public static final int REPLACE = 4;
    public static final int CLEAR = 5;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private ContentDigest() {
    }

    /** The digest after one more mutation. */
    public static long next(long digest, long seq, int op, int idCrc, int contentCrc) {
        long h = mix(digest ^ seq * GOLDEN);
        h = mix(h + (op & 0xFF));
        return mix(h ^ ((long) idCrc << 32 | (contentCrc & 0xFFFFFFFFL)));
    }

    /** The digest after a sequenced mutation of type {@code op} refused for good with {@code status}. */
    public static long refused(long digest, long seq, int op, Status status) {
        return next(digest, seq, 0x80 | op, 0, status.code());
    }

    /** Murmur3's 64-bit finaliser: every input bit reaches every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }

    public static int crc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    public static int crc(byte[] b) {
        return b == null ? crc(new byte[0], 0, 0) : crc(b, 0, b.length);
    }

    /** CRC32C of what a PUT (body != null) or REPLACE (body == null) carries after its id, as the journal record lays it out. */
    public static int contentCrc(int priority, long notBefore, ByteBuf state, ByteBuf body) {
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

    /** {@link #contentCrc(int, long, ByteBuf, ByteBuf)} from arrays (null state: empty; null body: a REPLACE). */
    public static int contentCrc(int priority, long notBefore, byte[] state, byte[] body) {
        CRC32C c = new CRC32C();
        byte[] fixed = new byte[13];
        int stateLen = state == null ? 0 : state.length;
        fixed[0] = (byte) priority;
        putLong(fixed, 1, notBefore);
        putInt(fixed, 9, stateLen);
        c.update(fixed, 0, 13);
        if (stateLen > 0) {
            c.update(state, 0, stateLen);
        }
        if (body != null) {
            putInt(fixed, 0, body.length);
            c.update(fixed, 0, 4);
            c.update(body, 0, body.length);
        }
        return (int) c.getValue();
    }

    /**
     * Not the journal's allocation-free {@code RecordBytes.updateCrc}: the writer computes this on its
     * own thread over buffers Netty may be writing to a socket at the same time, and
     * {@code internalNioBuffer} is one shared view per buffer (slices included), so this takes its
     * own views.
     */
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
