package org.jameskvs.james.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.queue.KvsMailQueueFactory.AdoptionTarget;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

/**
 * The move of one adopted queue against in-memory queues (a unit seam: the real queues are in
 * AdoptionTest and the src/it cluster tests): every field kept; a delete that failed is retried before
 * anything is read again, so no mail is put twice; a fenced delete stops the move.
 */
class QueueMoverTest {

    @Test
    void movesEveryMessageWithItsFieldsAndDeletesItFromTheSource() {
        MemoryQueue source = new MemoryQueue("lost/queue/outgoing@p5");
        MemoryQueue target = new MemoryQueue("mine/queue/outgoing@p5");
        for (int i = 0; i < 10; i++) {
            source.put(("id-" + i).getBytes(StandardCharsets.US_ASCII), 5, i == 3 ? Long.MAX_VALUE / 2 : 0, new byte[] {(byte) i},
                ("body-" + i).getBytes(StandardCharsets.US_ASCII));
        }
        AtomicInteger arrived = new AtomicInteger();
        QueueMover mover = new QueueMover(source, new AdoptionTarget(target, delayed -> arrived.incrementAndGet()), 4, 1 << 20,
            Duration.ofSeconds(5));
        int rounds = 0;
        while (mover.moveBlock() != QueueMover.Outcome.EMPTY && rounds++ < 20) {
            // moving
        }
        assertThat(source.messages).isEmpty();
        assertThat(target.messages).hasSize(10);
        StoredMessage delayed = target.messages.get("id-3");
        assertThat(delayed.notBefore()).isEqualTo(Long.MAX_VALUE / 2);
        assertThat(delayed.state()).containsExactly(3);
        assertThat(new String(delayed.body(), StandardCharsets.US_ASCII)).isEqualTo("body-3");
        assertThat(mover.moved()).isEqualTo(10);
        assertThat(arrived.get()).isPositive();
    }

    @Test
    void aFailedDeleteIsRetriedWithoutPuttingTheMailAgain() {
        MemoryQueue source = new MemoryQueue("lost/queue/spool@p5");
        MemoryQueue target = new MemoryQueue("mine/queue/spool@p5");
        source.put("only".getBytes(StandardCharsets.US_ASCII), 5, 0, new byte[0], new byte[] {1});
        source.failDeletes.set(1);
        QueueMover mover = new QueueMover(source, new AdoptionTarget(target, delayed -> { }), 4, 1 << 20, Duration.ofSeconds(5));
        assertThat(mover.moveBlock()).isEqualTo(QueueMover.Outcome.STORE_BUSY);
        target.messages.clear(); // the target delivered it meanwhile
        assertThat(mover.moveBlock()).isNotEqualTo(QueueMover.Outcome.STORE_BUSY);
        assertThat(source.messages).isEmpty();
        assertThat(target.puts.get()).as("put once: a second put would be a second delivery").isEqualTo(1);
    }

    @Test
    void aFencedDeleteStopsTheMove() {
        MemoryQueue source = new MemoryQueue("lost/queue/spool@p5");
        MemoryQueue target = new MemoryQueue("mine/queue/spool@p5");
        source.put("x".getBytes(StandardCharsets.US_ASCII), 5, 0, new byte[0], new byte[] {1});
        source.fenced = true;
        QueueMover mover = new QueueMover(source, new AdoptionTarget(target, delayed -> { }), 4, 1 << 20, Duration.ofSeconds(5));
        assertThat(mover.moveBlock()).isEqualTo(QueueMover.Outcome.FENCED);
        assertThat(mover.lastProblem()).contains("STALE_EPOCH");
    }

    /** A queue in memory: put appends (DUPLICATE_ID for a live id), read from a position, delete by id. */
    private static final class MemoryQueue implements KvsQueue {
        final String name;
        final Map<String, StoredMessage> messages = new LinkedHashMap<>();
        final AtomicInteger failDeletes = new AtomicInteger();
        final AtomicInteger puts = new AtomicInteger();
        boolean fenced;
        long next;

        MemoryQueue(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            String key = new String(id, StandardCharsets.US_ASCII);
            if (messages.containsKey(key)) {
                return CompletableFuture.completedFuture(Ack.failed(Status.DUPLICATE_ID, "live"));
            }
            puts.incrementAndGet();
            messages.put(key, new StoredMessage(next++, id, priority, notBefore, state, body));
            return CompletableFuture.completedFuture(new Ack(Status.OK, 0, next - 1, null));
        }

        @Override
        public CompletableFuture<Ack> delete(byte[] id) {
            if (fenced) {
                return CompletableFuture.completedFuture(Ack.failed(Status.STALE_EPOCH, "newer epoch"));
            }
            if (failDeletes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                return CompletableFuture.completedFuture(Ack.failed(Status.TIMEOUT, "no answer"));
            }
            boolean removed = messages.remove(new String(id, StandardCharsets.US_ASCII)) != null;
            return CompletableFuture.completedFuture(removed ? new Ack(Status.OK, 0, 0, null) : Ack.failed(Status.NOT_FOUND, ""));
        }

        @Override
        public CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
            List<StoredMessage> block = new ArrayList<>();
            long nextPosition = fromPosition;
            for (StoredMessage m : messages.values()) {
                if (m.position() >= fromPosition && block.size() < maxCount) {
                    block.add(m);
                    nextPosition = m.position() + 1;
                }
            }
            return CompletableFuture.completedFuture(new ReadResult(Status.OK, null, 0, nextPosition, block));
        }

        @Override
        public CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<GetResult> get(byte[] id) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<QueueStat> stat() {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Ack> clear() {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Ack> drop() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }
}
