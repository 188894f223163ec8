package org.jameskvs.james.queue;

import java.util.concurrent.CompletableFuture;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;

/**
 * A queue that passes every call to a real one: a test's queue wrapper overrides only the calls it
 * holds back, refuses or records.
 */
abstract class ForwardingKvsQueue implements KvsQueue {
    protected final KvsQueue queue;

    ForwardingKvsQueue(KvsQueue queue) {
        this.queue = queue;
    }

    @Override
    public String name() {
        return queue.name();
    }

    @Override
    public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return queue.put(id, priority, notBefore, state, body);
    }

    @Override
    public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return queue.putReplacing(id, priority, notBefore, state, body);
    }

    @Override
    public CompletableFuture<Ack> delete(byte[] id) {
        return queue.delete(id);
    }

    @Override
    public CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
        return queue.replace(id, priority, notBefore, state);
    }

    @Override
    public CompletableFuture<GetResult> get(byte[] id) {
        return queue.get(id);
    }

    @Override
    public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
        return queue.read(fromPosition, maxCount, maxBytes, readyBefore);
    }

    @Override
    public CompletableFuture<QueueStat> stat() {
        return queue.stat();
    }

    @Override
    public CompletableFuture<Ack> clear() {
        return queue.clear();
    }

    @Override
    public CompletableFuture<Ack> drop() {
        return queue.drop();
    }

    @Override
    public void close() {
        queue.close();
    }
}
