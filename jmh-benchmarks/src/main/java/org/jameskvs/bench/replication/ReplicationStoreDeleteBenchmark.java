package org.jameskvs.bench.replication;

import org.jameskvs.bench.StoreDeleteBatch;
import org.jameskvs.bench.StoreDeleteThroughput;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * What the second copy costs: store+delete transactions per second with 1 KB messages, each
 * invocation {@value #BATCH} transactions pipelined, in the same run for
 * <ul>
 * <li>{@code kvs-2copies}: a ReplicatedQueue over two KVS server processes (an ack = both copies),
 * one pipelined data connection per node;</li>
 * <li>{@code kvs-1copy}: one KVS server process through a plain KvsClient (one connection);</li>
 * <li>{@code redis-aof}: Redis with AOF everysec (RPUSH/LPOP, one pipelined connection).</li>
 * </ul>
 * All servers run as their own processes on 127.0.0.1 (fsync none for KVS), started per trial.
 * <pre>
 * mvn -q -o package -pl jmh-benchmarks -DskipTests
 * java -cp jmh-benchmarks/target/benchmarks.jar org.openjdk.jmh.Main ReplicationStoreDeleteBenchmark
 * # (not "java -jar": the jar's main class is BenchmarkReport, which runs the KVS-vs-Redis suite)
 * </pre>
 * Results: jmh-benchmarks/REPLICATION-BENCHMARKS.md.
 */
public class ReplicationStoreDeleteBenchmark extends StoreDeleteThroughput {
    static final int BATCH = StoreDeleteBatch.SIZE;

    @Param({"kvs-2copies", "kvs-1copy", "redis-aof"})
    public String target;

    @Param({"1024"})
    public int size;

    private long round;

    @Setup(Level.Trial)
    public void start() throws Exception {
        batch = new StoreDeleteBatch(target, size);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int storeDelete() throws Exception {
        // Fresh ids per batch: the replicated queue keeps no id twice, even across a delete.
        long r = round++;
        for (int i = 0; i < BATCH; i++) {
            batch.id(i, "m-" + r + "-" + i);
        }
        return batch.run();
    }
}
