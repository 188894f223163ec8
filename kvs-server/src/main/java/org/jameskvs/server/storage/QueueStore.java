package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Status;

import java.util.Collection;

/**
 * STUB: the storage helper replaces the bodies, keeping the signatures. Crash contract goes here.
 */
public final class QueueStore implements AutoCloseable {

    public static QueueStore open(StoreConfig config) {
        throw new UnsupportedOperationException("not implemented");
    }

    /** @return the queue or null. */
    public QueueState queue(String name) {
        throw new UnsupportedOperationException();
    }

    /** Creates the queue if absent (journaled), else returns the existing one (limits updated if non-zero). */
    public QueueState create(String name, long maxMessages, long maxBytes) {
        throw new UnsupportedOperationException();
    }

    public Collection<? extends QueueState> queues() {
        throw new UnsupportedOperationException();
    }

    /** On OK, the new message's position is {@code q.nextPosition() - 1}. */
    public Status put(QueueState q, byte[] id, int priority, long notBefore, ByteBuf state, ByteBuf body) {
        throw new UnsupportedOperationException();
    }

    public Status delete(QueueState q, byte[] id) {
        throw new UnsupportedOperationException();
    }

    public Status replace(QueueState q, byte[] id, int priority, long notBefore, ByteBuf state) {
        throw new UnsupportedOperationException();
    }

    public Status clear(QueueState q) {
        throw new UnsupportedOperationException();
    }

    public Status drop(QueueState q) {
        throw new UnsupportedOperationException();
    }

    /** Records a new owner and epoch (journaled, counts as a mutation). */
    public Status setOwner(QueueState q, long epoch, String owner) {
        throw new UnsupportedOperationException();
    }

    /** GET: writes one message record; returns NOT_FOUND (writing nothing) when no live message has the id. */
    public Status get(QueueState q, byte[] id, ByteBuf out) {
        throw new UnsupportedOperationException();
    }

    /** READ: writes the whole OK payload (i64 nextPosition, i32 count, records). */
    public Status read(QueueState q, long fromPosition, int maxCount, int maxBytes, long readyBefore, ByteBuf out) {
        throw new UnsupportedOperationException();
    }

    /** End of a block of requests: group commit (fsync if the policy is BATCH). */
    public Status commit() {
        throw new UnsupportedOperationException();
    }

    /** Periodic housekeeping: interval fsync, copy-forward of long-lived messages, deletion of dead journal files. */
    public void maintenance() {
        throw new UnsupportedOperationException();
    }

    /** Total bytes of journal files on disk. */
    public long journalBytes() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
}
