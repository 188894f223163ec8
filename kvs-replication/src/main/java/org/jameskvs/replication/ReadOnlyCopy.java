package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A read-only handle on a replicated queue ({@code open(name, OpenOptions.reader())}): reads come
 * from an in-sync copy named by the newest replication record and follow the copies when they move
 * (see {@link ReadOnlyReplica}); every READ result says which copy answered
 * ({@link ReadResult#positionSpace()}: rescan from 0 when it changes). The replication layer's own
 * record (ids starting with a zero byte) is hidden exactly as {@link ReplicatedQueue} does.
 * Mutations are refused. Every call gets exactly one outcome, never an exceptional completion.
 */
final class ReadOnlyCopy implements KvsQueue {
    private final ReplicatedQueueOpener opener;
    private final ReadOnlyReplica reader;

    ReadOnlyCopy(ReplicatedQueueOpener opener, ReadOnlyReplica reader) {
        this.opener = opener;
        this.reader = reader;
    }

    @Override
    public String name() {
        return reader.name();
    }

    @Override
    public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return opener.call(c -> reader.read(fromPosition, maxCount, maxBytes, readyBefore), why -> new ReadResult(Status.TIMEOUT, why, -1, fromPosition, List.of()));
    }

    @Override
    public CompletableFuture<ReadResult> readUncommitted(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return opener.call(c -> reader.readUncommitted(fromPosition, maxCount, maxBytes, readyBefore),
                why -> new ReadResult(Status.TIMEOUT, why, -1, fromPosition, List.of()));
    }

    @Override
    public CompletableFuture<GetResult> get(byte[] id) {
        return opener.call(c -> reader.get(id), why -> new GetResult(Status.TIMEOUT, why, -1, null));
    }

    @Override
    public CompletableFuture<QueueStat> stat() {
        return opener.call(c -> reader.stat(), why -> new QueueStat(Status.TIMEOUT, why, -1, 0, 0, 0, 0, Long.MAX_VALUE, 0, ""));
    }

    /** For tests and diagnostics: the node whose copy serves reads now (null while none). */
    CompletableFuture<String> servingNode() {
        return opener.onCore(c -> CompletableFuture.completedFuture(reader.servingNode()));
    }

    @Override
    public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return readOnly();
    }

    @Override
    public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return readOnly();
    }

    @Override
    public CompletableFuture<Ack> delete(byte[] id) {
        return readOnly();
    }

    @Override
    public CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
        return readOnly();
    }

    @Override
    public CompletableFuture<Ack> clear() {
        return readOnly();
    }

    @Override
    public CompletableFuture<Ack> drop() {
        return readOnly();
    }

    private static CompletableFuture<Ack> readOnly() {
        return CompletableFuture.completedFuture(Ack.failed(Status.READ_ONLY, "read-only copy"));
    }

    @Override
    public void close() {
        opener.closeReader(reader);
    }

    @Override
    public String toString() {
        return "ReadOnlyCopy{" + name() + "}";
    }
}
