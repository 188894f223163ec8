package org.jameskvs.james.queue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
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

    private final class Holding extends ForwardingKvsQueue {
        Holding(KvsQueue queue) {
            super(queue);
        }

        @Override
        public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
            return maybeHold(fromPosition, queue.read(fromPosition, maxCount, maxBytes, readyBefore));
        }
    }
}
