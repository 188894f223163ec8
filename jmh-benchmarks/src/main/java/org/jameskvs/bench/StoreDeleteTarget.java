package org.jameskvs.bench;

import org.jameskvs.bench.replication.ReplicatedTarget;

import java.util.concurrent.CompletableFuture;

/**
 * One system under test for the paper's Fig. 4 workload: a transaction is "store a message, then
 * delete it" (what relaying one mail costs the store), issued pipelined on one connection.
 */
public interface StoreDeleteTarget extends AutoCloseable {
    /** Issues {@code ids.length} store+delete transactions pipelined and waits for all answers; returns how many succeeded. */
    int storeDeleteBatch(byte[][] ids, byte[] body) throws Exception;

    /**
     * Sends one store. The future completes with {@code null} when the store is acknowledged OK, else
     * with the {@link Failure} (a non-OK status, an error reply, a lost connection); never exceptionally.
     */
    CompletableFuture<Failure> store(byte[] id, byte[] body);

    /** Sends one delete; completes like {@link #store}. */
    CompletableFuture<Failure> delete(byte[] id);

    /** Pushes buffered pipelined commands to the wire (no-op where the client batches by itself). */
    default void flush() {
    }

    /** The server processes behind this target (for CPU accounting). */
    default java.util.List<Process> serverProcesses() {
        return java.util.List.of();
    }

    /** The metrics ports of the KVS servers behind this target ({@link ServerTimers}); none for Redis. */
    default java.util.List<Integer> metricsPorts() {
        return java.util.List.of();
    }

    /**
     * Targets by name: {@code kvs} (alias {@code kvs-1copy}), {@code kvs-fsync-batch}, {@code kvs-2copies},
     * {@code kvs-2copies-fsync-batch}, {@code redis-aof} (everysec), {@code redis-aof-always},
     * {@code redis-none}. Each starts its own server process(es).
     */
    static StoreDeleteTarget create(String name) throws Exception {
        return switch (name) {
            case "kvs", "kvs-1copy" -> new KvsTarget(ServerProcesses.kvs("none"));
            case "kvs-fsync-batch" -> new KvsTarget(ServerProcesses.kvs("batch"));
            case "kvs-2copies" -> new ReplicatedTarget(2, "none");
            case "kvs-2copies-fsync-batch" -> new ReplicatedTarget(2, "batch");
            case "redis-aof" -> new RedisTarget(ServerProcesses.redis(RedisPersistence.AOF_EVERYSEC));
            case "redis-aof-always" -> new RedisTarget(ServerProcesses.redis(RedisPersistence.AOF_ALWAYS));
            case "redis-none" -> new RedisTarget(ServerProcesses.redis(RedisPersistence.NONE));
            default -> throw new IllegalArgumentException("unknown target " + name);
        };
    }

    /** What an acknowledgement of the named target promises, for labelling report rows. */
    static Durability durability(String name) {
        return switch (name) {
            case "redis-none" -> Durability.MEMORY;
            case "redis-aof" -> Durability.PAGE_CACHE_FSYNC_1S;
            case "kvs", "kvs-1copy", "kvs-2copies" -> Durability.PAGE_CACHE;
            case "kvs-fsync-batch", "kvs-2copies-fsync-batch", "redis-aof-always" -> Durability.FSYNC;
            default -> throw new IllegalArgumentException("unknown target " + name);
        };
    }
}
