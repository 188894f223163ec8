package org.jameskvs.james;

import java.util.concurrent.CompletableFuture;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;

/**
 * A write handle of {@link KvsQueues} that shows every answer to {@link Fencing}, so the node learns
 * it is fenced from whichever call meets the other writer first: an enqueue, the delete after a
 * delivery, a read, a repository store. Answers pass through unchanged.
 */
final class FenceDetectingQueue implements KvsQueue {
    private final KvsQueue queue;
    private final long epoch;
    private final Fencing fencing;

    /** @param epoch the epoch the queue was opened at (named in the fencing alert) */
    FenceDetectingQueue(KvsQueue queue, long epoch, Fencing fencing) {
        this.queue = queue;
        this.epoch = epoch;
        this.fencing = fencing;
    }

    private <T> T seen(T answer, Status status, String reason) {
        fencing.observe(queue.name(), epoch, status, reason);
        return answer;
    }

    private CompletableFuture<Ack> watched(CompletableFuture<Ack> ack) {
        return ack.thenApply(a -> seen(a, a.status(), a.reason()));
    }

    @Override
    public String name() {
        return queue.name();
    }

    @Override
    public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return watched(queue.put(id, priority, notBefore, state, body));
    }

    @Override
    public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return watched(queue.putReplacing(id, priority, notBefore, state, body));
    }

    @Override
    public CompletableFuture<Ack> delete(byte[] id) {
        return watched(queue.delete(id));
    }

    @Override
    public CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
        return watched(queue.replace(id, priority, notBefore, state));
    }

    @Override
    public CompletableFuture<GetResult> get(byte[] id) {
        return queue.get(id).thenApply(r -> seen(r, r.status(), r.reason()));
    }

    @Override
    public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return queue.read(fromPosition, maxCount, maxBytes, readyBefore).thenApply(r -> seen(r, r.status(), r.reason()));
    }

    @Override
    public CompletableFuture<QueueStat> stat() {
        return queue.stat().thenApply(r -> seen(r, r.status(), r.reason()));
    }

    @Override
    public CompletableFuture<Ack> clear() {
        return watched(queue.clear());
    }

    @Override
    public CompletableFuture<Ack> drop() {
        return watched(queue.drop());
    }

    @Override
    public void close() {
        queue.close();
    }

    @Override
    public String toString() {
        return queue.toString();
    }
}
