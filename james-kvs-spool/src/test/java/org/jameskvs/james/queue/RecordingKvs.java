package org.jameskvs.james.queue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.contract.InMemoryKvs;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

/**
 * InMemoryKvs that counts the messages READ hands out, can be told to refuse PUTs and OPENs, and can
 * play a change of the copy serving reads (as a replicated queue does after losing its read copy).
 */
final class RecordingKvs implements KvsQueueOpener {
    private final InMemoryKvs delegate = new InMemoryKvs();
    final AtomicLong messagesRead = new AtomicLong();
    final AtomicReference<Status> refusePuts = new AtomicReference<>();
    final AtomicLong refusedPuts = new AtomicLong();
    final AtomicReference<Status> refuseOpens = new AtomicReference<>();
    final AtomicLong refusedOpens = new AtomicLong();
    private final AtomicLong positionShift = new AtomicLong();
    private final AtomicInteger positionSpace = new AtomicInteger();

    /**
     * From now on reads come from "another copy" whose positions are {@code shift} lower than the
     * first one's (a rebuilt copy numbers its messages afresh), in a new position space.
     */
    void switchReadCopy(long shift) {
        positionShift.addAndGet(shift);
        positionSpace.incrementAndGet();
    }

    @Override
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        Status refusal = refuseOpens.get();
        if (refusal != null) {
            refusedOpens.incrementAndGet();
            return CompletableFuture.completedFuture(new OpenResult(refusal, "refused by test", null, -1, 0, 0));
        }
        return delegate.open(name, options).thenApply(result -> new OpenResult(result.status(), result.reason(),
            new Recording(result.queue()), result.txn(), result.epoch(), result.size()));
    }

    @Override
    public CompletableFuture<ListResult> listQueues() {
        return delegate.listQueues();
    }

    private final class Recording extends ForwardingKvsQueue {
        Recording(KvsQueue queue) {
            super(queue);
        }

        @Override
        public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            CompletableFuture<Ack> refused = refusedPut();
            return refused != null ? refused : queue.put(id, priority, notBefore, state, body);
        }

        @Override
        public CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            CompletableFuture<Ack> refused = refusedPut();
            return refused != null ? refused : queue.putReplacing(id, priority, notBefore, state, body);
        }

        /** The refusal {@link #refusePuts} asks for (counted), or null to let the PUT through. */
        private CompletableFuture<Ack> refusedPut() {
            Status refusal = refusePuts.get();
            if (refusal == null) {
                return null;
            }
            refusedPuts.incrementAndGet();
            return CompletableFuture.completedFuture(Ack.failed(refusal, "refused by test"));
        }

        @Override
        public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
            long shift = positionShift.get();
            int space = positionSpace.get();
            return queue.read(fromPosition + shift, maxCount, maxBytes, readyBefore).thenApply(result -> {
                messagesRead.addAndGet(result.messages().size());
                List<StoredMessage> renumbered = result.messages().stream()
                    .map(m -> new StoredMessage(m.position() - shift, m.id(), m.priority(), m.notBefore(), m.state(), m.body()))
                    .toList();
                return new ReadResult(result.status(), result.reason(), result.txn(), result.nextPosition() - shift, renumbered, space);
            });
        }
    }
}
