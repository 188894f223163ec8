package org.jameskvs.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The paper's Fig. 4: store+delete transactions per second on ONE pipelined connection, by message
 * size, for the KVS server and for Redis started side by side in the same run, at each durability
 * level ({@link StoreDeleteTarget#durability}): page cache (KVS fsync none, Redis AOF everysec),
 * fsync before the ack (KVS {@code fsync.policy=batch}, Redis {@code appendfsync always}) and, for
 * reference, Redis without persistence. Each invocation is {@value #BATCH} transactions in flight
 * together.
 */
public class StoreDeleteBenchmark extends StoreDeleteThroughput {
    static final int BATCH = StoreDeleteBatch.SIZE;

    @Param({"kvs", "kvs-fsync-batch", "redis-aof", "redis-aof-always", "redis-none"})
    public String target;

    @Param({"400", "1024", "2048", "10240", "20480"})
    public int size;

    @Setup(Level.Trial)
    public void start() throws Exception {
        batch = new StoreDeleteBatch(target, size);
        for (int i = 0; i < BATCH; i++) {
            batch.id(i, "msg-" + i);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int storeDelete() throws Exception {
        return batch.run();
    }
}
