package org.jameskvs.james.queue;

import java.util.concurrent.CompletableFuture;
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

/**
 * A real {@link KvsQueueOpener} whose next rescan (a READ from position 0), once {@link #arm armed},
 * reaches the servers at once but whose answer is held back from the reader until the test
 * {@link #letThrough lets it through}: the test can act between the moment the servers took the
 * READ's snapshot and the moment the reader looks at it.
 */
final class HeldRescan implements KvsQueueOpener {
    private final KvsQueueOpener real;
    private final AtomicReference<CompletableFuture<Void>> armed = new AtomicReference<>();
    /** Completes once the held READ has been answered by the servers. */
    private final CompletableFuture<ReadResult> answered = new CompletableFuture<>();

    HeldRescan(KvsQueueOpener real) {
        this.real = real;
    }

    /** Holds the answer of the next READ from position 0. */
    void arm() {
        armed.set(new CompletableFuture<>());
    }

    /** The servers' answer to the held READ, once it has come (the reader does not have it yet). */
    CompletableFuture<ReadResult> answered() {
        return answered;
    }

    /** Hands the held answer to the reader. */
    void letThrough() {
        CompletableFuture<Void> gate = armed.get();
        if (gate != null) {
            gate.complete(null);
        }
    }

    @Override
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        return real.open(name, options).thenApply(result -> result.queue() == null ? result
            : new OpenResult(result.status(), result.reason(), new Holding(result.queue()), result.txn(), result.epoch(), result.size()));
    }

    @Override
    public CompletableFuture<ListResult> listQueues() {
        return real.listQueues();
    }

    private CompletableFuture<ReadResult> maybeHold(long fromPosition, CompletableFuture<ReadResult> read) {
        CompletableFuture<Void> gate = armed.get();
        if (fromPosition != 0 || gate == null || answered.isDone()) {
            return read;
        }
        return read.thenCompose(result -> {
            answered.complete(result);
            return gate.thenApply(open -> result);
        });
    }

    private final class Holding implements KvsQueue {
        private final KvsQueue queue;

        Holding(KvsQueue queue) {
            this.queue = queue;
        }

        @Override
        public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
            return maybeHold(fromPosition, queue.read(fromPosition, maxCount, maxBytes, readyBefore));
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
