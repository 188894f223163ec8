package org.jameskvs.bench;

/**
 * One system under test for the paper's Fig. 4 workload: a transaction is "store a message, then
 * delete it" (what relaying one mail costs the store), issued pipelined on one connection.
 */
public interface StoreDeleteTarget extends AutoCloseable {
    /** Issues {@code ids.length} store+delete transactions pipelined and waits for all answers; returns how many succeeded. */
    int storeDeleteBatch(byte[][] ids, byte[] body) throws Exception;

    /** Sends one store and returns when it is acknowledged (latency probes). */
    java.util.concurrent.CompletableFuture<?> storeAsync(byte[] id, byte[] body);

    java.util.concurrent.CompletableFuture<?> deleteAsync(byte[] id);

    /** Pushes buffered pipelined commands to the wire (no-op where every call writes). */
    default void flush() {
    }

    /** The server processes behind this target (for CPU accounting). */
    default java.util.List<Process> serverProcesses() {
        return java.util.List.of();
    }

    static StoreDeleteTarget create(String name) throws Exception {
        return switch (name) {
            case "kvs" -> new KvsTarget(ServerProcesses.kvs("none"));
            case "kvs-fsync-batch" -> new KvsTarget(ServerProcesses.kvs("batch"));
            case "redis-aof" -> new RedisTarget(ServerProcesses.redis(true));
            case "redis-none" -> new RedisTarget(ServerProcesses.redis(false));
            default -> throw new IllegalArgumentException("unknown target " + name);
        };
    }
}
