package org.jameskvs.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The paper's Fig. 4: store+delete transactions per second on ONE pipelined connection, by message
 * size, for the KVS server and for Redis started side by side in the same run, at each durability
 * level ({@link StoreDeleteTarget#durability}): page cache (KVS fsync none, Redis AOF everysec),
 * fsync before the ack (KVS {@code fsync.policy=batch}, Redis {@code appendfsync always}) and, for
 * reference, Redis without persistence. Each invocation is {@value #BATCH} transactions in flight
 * together.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class StoreDeleteBenchmark {
    static final int BATCH = StoreDeleteBatch.SIZE;

    @Param({"kvs", "kvs-fsync-batch", "redis-aof", "redis-aof-always", "redis-none"})
    public String target;

    @Param({"400", "1024", "2048", "10240", "20480"})
    public int size;

    private StoreDeleteBatch batch;

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

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        batch.close();
    }
}
