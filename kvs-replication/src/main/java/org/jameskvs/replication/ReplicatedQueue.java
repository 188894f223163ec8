package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;

import java.util.concurrent.CompletableFuture;

/**
 * A queue kept on two KVS nodes, with the {@link KvsQueue} contract: every call is asynchronous,
 * calls are applied in call order, futures complete with a status and never exceptionally.
 *
 * <p>A mutation's ack (OK) means both copies applied it. Failures: {@code STORAGE_ERROR}
 * ("only one copy can take writes": no second node available), {@code TIMEOUT} (a copy was lost
 * before answering and no replacement copy was completed in time: the outcome is unknown), {@code STALE_EPOCH} (another James node took the
 * queue over; this object is dead), {@code INTERNAL_ERROR} (the copies disagreed; one is being
 * re-synchronised). Reads go to one in-sync copy. Futures complete on the opener's callback
 * thread, in call order; callbacks must not block it for long.
 *
 * <p>{@link #drop()} is not supported on a replicated queue (use {@link #clear()}).
 */
public final class ReplicatedQueue implements KvsQueue {
    private final ReplicatedQueueOpener opener;
    private final QueueReplica replica;

    ReplicatedQueue(ReplicatedQueueOpener opener, QueueReplica replica) {
        this.opener = opener;
        this.replica = replica;
    }

    @Override
    public String name() {
        return replica.name();
    }

    /** The writer's epoch (counter) this queue is held with. */
    public long epoch() {
        return replica.epochCounter();
    }

    @Override
    public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return opener.call(c -> c.put(replica, id, priority, notBefore, state, body), ReplicatedQueue::unknownAck);
    }

    @Override
    public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return opener.call(c -> c.putReplacing(replica, id, priority, notBefore, state, body), ReplicatedQueue::unknownAck);
    }

    @Override
    public CompletableFuture<Ack> delete(byte[] id) {
        return opener.call(c -> c.delete(replica, id), ReplicatedQueue::unknownAck);
    }

    @Override
    public CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
        return opener.call(c -> c.replace(replica, id, priority, notBefore, state), ReplicatedQueue::unknownAck);
    }

    @Override
    public CompletableFuture<GetResult> get(byte[] id) {
        return opener.call(c -> c.get(replica, id), why -> new GetResult(Status.TIMEOUT, why, -1, null));
    }

    @Override
    public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return opener.call(c -> c.read(replica, fromPosition, maxCount, maxBytes, readyBefore), why -> new ReadResult(Status.TIMEOUT, why, -1, fromPosition, java.util.List.of()));
    }

    @Override
    public CompletableFuture<QueueStat> stat() {
        return opener.call(c -> c.stat(replica), why -> new QueueStat(Status.TIMEOUT, why, -1, 0, 0, 0, 0, Long.MAX_VALUE, 0, ""));
    }

    @Override
    public CompletableFuture<Ack> clear() {
        return opener.call(c -> c.clear(replica), ReplicatedQueue::unknownAck);
    }

    @Override
    public CompletableFuture<Ack> drop() {
        return CompletableFuture.completedFuture(Ack.failed(Status.BAD_REQUEST,
                "drop is not supported on a replicated queue; use clear()"));
    }

    /** Changes of the copy that serves reads (positions then refer to the new copy: rescan from 0). */
    public CompletableFuture<Integer> readCopyChanges() {
        return opener.onCore(c -> CompletableFuture.completedFuture(replica.readCopyChanges()));
    }

    @Override
    public void close() {
        opener.closeQueue(replica);
    }

    @Override
    public String toString() {
        return "ReplicatedQueue{" + name() + "}";
    }

    private static Ack unknownAck(String why) {
        return Ack.failed(Status.TIMEOUT, why);
    }
}
