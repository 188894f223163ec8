package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The tail that OPEN and STAT answers share: {@code u8 queue flags, i64 last seq, i64 digest,
 * i64 store}, what two copies are compared by (equal iff epoch, last seq and digest are) and which
 * store of its node holds the copy. The flags byte was added after the fields before it: a payload
 * that ends before it reads it as 0; version 2 always sends last seq and digest after it. The store
 * id came last (a server that ends before it: 0, unknown): a random non-zero number the server
 * drew when its data directory was first used, the same across its restarts, a new one when it
 * starts on an empty directory (a lost or replaced disk). It is how a writer tells a node that
 * restarted with its data from one that lost it (see the replication's {@code OpenProcedure}).
 */
public abstract class CopyCheckAnswer {
    private int queueFlags;
    private long lastSeq;
    private long digest;
    private long store;

    static void writeCheck(ByteBuf out, int queueFlags, long lastSeq, long digest, long store) {
        out.writeByte(queueFlags);
        out.writeLong(lastSeq);
        out.writeLong(digest);
        out.writeLong(store);
    }

    final void readCheck(ByteBuf p) {
        queueFlags = p.isReadable() ? p.readUnsignedByte() : 0;
        lastSeq = Wire.readLong(p);
        digest = Wire.readLong(p);
        store = p.readableBytes() >= Long.BYTES ? p.readLong() : 0;
    }

    public final int queueFlags() {
        return queueFlags;
    }

    public final long lastSeq() {
        return lastSeq;
    }

    public final long digest() {
        return digest;
    }

    /** The id of the server's store that holds the copy; 0 when the server did not say. */
    public final long store() {
        return store;
    }
}
