package org.jameskvs.james.contract;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ListResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueInfo;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

/**
 * A test double of a KVS server following the protocol's queue semantics (positions, ids,
 * readyBefore filter, block limits, STAT), without ownership/epochs. Lets the adapter be tested
 * without a server; the same suites also run against a real {@code KvsServer}.
 */
public final class InMemoryKvs implements KvsQueueOpener {
    private final Map<String, MemoryQueue> queues = new ConcurrentHashMap<>();

    @Override
    public CompletableFuture<OpenResult> open(String name, OpenOptions options) {
        MemoryQueue queue = queues.computeIfAbsent(name, MemoryQueue::new);
        return CompletableFuture.completedFuture(new OpenResult(Status.OK, null, queue, 0, options.epoch(), queue.size()));
    }

    @Override
    public CompletableFuture<ListResult> listQueues() {
        List<QueueInfo> infos = new ArrayList<>();
        queues.values().forEach(q -> infos.add(new QueueInfo(q.name, q.size(), 0)));
        return CompletableFuture.completedFuture(new ListResult(Status.OK, null, infos));
    }

    private static final class MemoryQueue implements KvsQueue {
        private final String name;
        private final TreeMap<Long, StoredMessage> byPosition = new TreeMap<>();
        private final Map<String, Long> positionById = new java.util.HashMap<>();
        private long nextPosition = 1;
        private long txn;

        MemoryQueue(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        synchronized long size() {
            return byPosition.size();
        }

        private static String key(byte[] id) {
            return Arrays.toString(id);
        }

        private static CompletableFuture<Ack> ack(Status status, long txn, long value) {
            return CompletableFuture.completedFuture(new Ack(status, txn, value, status == Status.OK ? null : status.description()));
        }

        @Override
        public synchronized CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
            if (positionById.containsKey(key(id))) {
                return ack(Status.DUPLICATE_ID, txn, 0);
            }
            long position = nextPosition++;
            byPosition.put(position, new StoredMessage(position, id.clone(), priority, notBefore, state.clone(), body));
            positionById.put(key(id), position);
            return ack(Status.OK, ++txn, position);
        }

        @Override
        public synchronized CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state,
                                                              byte[] body) {
            Long old = positionById.remove(key(id));
            if (old != null) {
                byPosition.remove(old);
                txn--; // one transaction for the swap, as on the server
            }
            return put(id, priority, notBefore, state, body);
        }

        @Override
        public synchronized CompletableFuture<Ack> delete(byte[] id) {
            Long position = positionById.remove(key(id));
            if (position == null) {
                return ack(Status.NOT_FOUND, txn, 0);
            }
            byPosition.remove(position);
            return ack(Status.OK, ++txn, 0);
        }

        @Override
        public synchronized CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state) {
            Long position = positionById.get(key(id));
            if (position == null) {
                return ack(Status.NOT_FOUND, txn, 0);
            }
            StoredMessage old = byPosition.get(position);
            byPosition.put(position, new StoredMessage(position, old.id(), priority, notBefore, state.clone(), old.body()));
            return ack(Status.OK, ++txn, 0);
        }

        @Override
        public synchronized CompletableFuture<GetResult> get(byte[] id) {
            Long position = positionById.get(key(id));
            if (position == null) {
                return CompletableFuture.completedFuture(new GetResult(Status.NOT_FOUND, "not found", txn, null));
            }
            return CompletableFuture.completedFuture(new GetResult(Status.OK, null, txn, byPosition.get(position)));
        }

        @Override
        public synchronized CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore) {
            List<StoredMessage> result = new ArrayList<>();
            long bytes = 0;
            long next = Math.max(fromPosition, nextPosition);
            for (StoredMessage message : byPosition.tailMap(fromPosition, true).values()) {
                if (result.size() >= maxCount || (!result.isEmpty() && bytes >= maxBytes)) {
                    next = message.position();
                    break;
                }
                if (readyBefore != 0 && message.notBefore() > readyBefore) {
                    continue;
                }
                result.add(message);
                bytes += message.body().length;
            }
            return CompletableFuture.completedFuture(new ReadResult(Status.OK, null, txn, next, result));
        }

        @Override
        public synchronized CompletableFuture<QueueStat> stat() {
            long bytes = byPosition.values().stream().mapToLong(m -> m.body().length).sum();
            long earliest = byPosition.values().stream().mapToLong(StoredMessage::notBefore).filter(n -> n > 0)
                .min().orElse(Long.MAX_VALUE);
            long first = byPosition.isEmpty() ? nextPosition : byPosition.firstKey();
            return CompletableFuture.completedFuture(new QueueStat(Status.OK, null, txn, byPosition.size(), bytes, first,
                nextPosition, earliest, 0, ""));
        }

        @Override
        public synchronized CompletableFuture<Ack> clear() {
            byPosition.clear();
            positionById.clear();
            return ack(Status.OK, ++txn, 0);
        }

        @Override
        public CompletableFuture<Ack> drop() {
            return clear();
        }

        @Override
        public void close() {
        }
    }
}
