package org.jameskvs.bench;

import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The run settings of the store+delete throughput benchmarks (JMH reads them, and the tear-down,
 * from this superclass): transactions per second, 3 warm-up and 5 measured iterations of 2 s, one
 * fork with 1 GB of heap; each subclass starts its {@link #batch} per trial.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public abstract class StoreDeleteThroughput {
    protected StoreDeleteBatch batch;

    @TearDown(Level.Trial)
    public void stop() throws Exception {
        batch.close();
    }
}
