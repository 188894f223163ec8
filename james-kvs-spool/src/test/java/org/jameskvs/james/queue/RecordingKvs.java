package org.jameskvs.james.queue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.contract.InMemoryKvs;
import org.jameskvs.protocol.Status;

/** InMemoryKvs that counts the messages READ hands out and can be told to refuse PUTs. */
final class RecordingKvs implements KvsQueueOpener {
    private final InMemoryKvs delegate = new InMemoryKvs();
    final AtomicLong messagesRead = new AtomicLong();
    final AtomicReference<Status> refusePuts = new AtomicReference<>();

    @Override
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        return delegate.open(name, options).thenApply(result -> new OpenResult(result.status(), result.reason(),
            new Recording(result.queue()), result.txn(), result.epoch(), result.size()));
    }

    @Override
    public CompletableFuture<ListResult> listQueues() {
        return delegate.listQueues();
    }

    private final class Recording implements KvsQueue {
        private final KvsQueue queue;

        Recording(KvsQueue queue) {
            this.queue = queue;
        }

        @Override
        public String name() {
            return queue.name();
        }

        @Override
        public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            Status refusal = refusePuts.get();
            if (refusal != null) {
                return CompletableFuture.completedFuture(Ack.failed(refusal, "refused by test"));
            }
            return queue.put(id, priority, notBefore, state, body);
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
            return queue.read(fromPosition, maxCount, maxBytes, readyBefore).thenApply(result -> {
                messagesRead.addAndGet(result.messages().size());
                return result;
            });
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
}
