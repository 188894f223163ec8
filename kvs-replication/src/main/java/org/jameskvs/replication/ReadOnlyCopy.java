package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A read handle on ONE copy of a replicated queue, hiding the replication layer's own record (ids
 * starting with a zero byte) exactly as {@link ReplicatedQueue} does. Mutations are refused.
 */
final class ReadOnlyCopy implements KvsQueue {
    private final KvsQueue copy;

    ReadOnlyCopy(KvsQueue copy) {
        this.copy = copy;
    }

    @Override
    public String name() {
        return copy.name();
    }

    @Override
    public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return copy.read(fromPosition, maxCount, maxBytes, readyBefore).thenApply(r -> {
            if (!r.isOk() || r.messages().stream().noneMatch(m -> Ids.isReserved(m.id()))) {
                return r;
            }
            List<StoredMessage> visible = r.messages().stream().filter(m -> !Ids.isReserved(m.id())).toList();
            return new ReadResult(r.status(), r.reason(), r.txn(), r.nextPosition(), visible, r.positionSpace());
        });
    }

    @Override
    public CompletableFuture<GetResult> get(byte[] id) {
        return Ids.isReserved(id)
                ? CompletableFuture.completedFuture(new GetResult(Status.NOT_FOUND, "reserved id", 0, null))
                : copy.get(id);
    }

    @Override
    public CompletableFuture<QueueStat> stat() {
        // The copy may hold the membership record: it is not a message of the queue.
        return copy.stat().thenCompose(st -> !st.isOk() ? CompletableFuture.completedFuture(st)
                : copy.get(Ids.RECORD_ID).thenApply(g -> !g.isOk() ? st
                : new QueueStat(st.status(), st.reason(), st.txn(), Math.max(0, st.size() - 1), st.bytes(),
                st.firstPosition(), st.nextPosition(), st.earliestNotBefore(), st.epoch(), st.owner())));
    }

    @Override
    public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
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
        copy.close();
    }
}
