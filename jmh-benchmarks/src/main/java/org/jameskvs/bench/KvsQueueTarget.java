package org.jameskvs.bench;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;

import java.util.concurrent.CompletableFuture;

/**
 * A target that writes through a {@link KvsQueue}: one server's ({@link KvsTarget}) or a
 * replicated one ({@link org.jameskvs.bench.replication.ReplicatedTarget}), with the same PUT and
 * DELETE requests (priority 5, no state), so the two measure the same work.
 */
public abstract class KvsQueueTarget implements StoreDeleteTarget {
    private static final byte[] NO_STATE = new byte[0];

    /** The queue the target writes to, open for writing. */
    protected abstract KvsQueue queue();

    @Override
    public int storeDeleteBatch(byte[][] ids, byte[] body) {
        return storeDeleteBatch(queue(), ids, body);
    }

    /**
     * Pipelines one put and one delete per id on any {@link KvsQueue} (one server, or replicated) and
     * waits for all answers; returns how many transactions succeeded on both requests.
     */
    public static int storeDeleteBatch(KvsQueue queue, byte[][] ids, byte[] body) {
        @SuppressWarnings("unchecked")
        CompletableFuture<Ack>[] acks = new CompletableFuture[ids.length * 2];
        for (int i = 0; i < ids.length; i++) {
            acks[2 * i] = queue.put(ids[i], 5, 0, NO_STATE, body);
            acks[2 * i + 1] = queue.delete(ids[i]);
        }
        CompletableFuture.allOf(acks).join();
        int ok = 0;
        for (int i = 0; i < ids.length; i++) {
            if (acks[2 * i].join().isOk() && acks[2 * i + 1].join().isOk()) {
                ok++;
            }
        }
        return ok;
    }

    @Override
    public CompletableFuture<Failure> store(byte[] id, byte[] body) {
        return queue().put(id, 5, 0, NO_STATE, body).thenApply(Failure::of);
    }

    @Override
    public CompletableFuture<Failure> delete(byte[] id) {
        return queue().delete(id).thenApply(Failure::of);
    }
}
