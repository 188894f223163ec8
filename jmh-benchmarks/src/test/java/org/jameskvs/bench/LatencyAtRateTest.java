package org.jameskvs.bench;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The latency run counts what the target answered, not what was offered: a store answered with a
 * failure is an error and never a latency sample, and the achieved rate comes from OK acks only.
 * The target is a scripted stand-in (the unit seam); the real servers are exercised by LatencyReport.
 */
class LatencyAtRateTest {
    private final ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        answers.shutdownNow();
    }

    /** Answers each store after 1 ms from another thread; every store whose id ends in 7 is refused. */
    private class ScriptedTarget implements StoreDeleteTarget {
        final AtomicInteger stores = new AtomicInteger();
        final AtomicInteger deletes = new AtomicInteger();

        @Override
        public int storeDeleteBatch(byte[][] ids, byte[] body) {
            throw new UnsupportedOperationException("not used by the latency run");
        }

        @Override
        public CompletableFuture<Failure> store(byte[] id, byte[] body) {
            stores.incrementAndGet();
            boolean refused = new String(id, StandardCharsets.US_ASCII).endsWith("7");
            CompletableFuture<Failure> f = new CompletableFuture<>();
            answers.schedule(() -> f.complete(refused ? new Failure("QUEUE_FULL", "scripted refusal") : null),
                    1, TimeUnit.MILLISECONDS);
            return f;
        }

        @Override
        public CompletableFuture<Failure> delete(byte[] id) {
            deletes.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void close() {
        }
    }

    @Test
    void refusedStoresAreErrorsNotSamplesAndTheAchievedRateCountsOnlyOkAcks() {
        ScriptedTarget target = new ScriptedTarget();

        LatencyAtRate.Result r = LatencyAtRate.run(target, new byte[16], "t-", 1000, 2);

        assertThat(r.offered()).isEqualTo(2000);
        assertThat(r.sent()).isEqualTo(2000);
        assertThat(target.stores.get()).isEqualTo(2000);
        assertThat(target.deletes.get()).isEqualTo(2000);
        // ids t-0 .. t-1999: one in ten ends in 7
        assertThat(r.storeFailures()).isEqualTo(200);
        assertThat(r.errors()).isEqualTo(200);
        assertThat(r.failures()).containsOnlyKeys("store QUEUE_FULL");
        assertThat(r.failures().get("store QUEUE_FULL")).startsWith("200 ").contains("scripted refusal");
        assertThat(r.latency().getTotalCount()).isEqualTo(1800);
        assertThat(r.okInWindow() + r.okLate()).isEqualTo(1800);
        assertThat(r.achievedRate()).isEqualTo(r.okInWindow() / 2.0).isLessThanOrEqualTo(900.0);
    }

    @Test
    void aTargetThatFailsEverythingHasNoLatencyAndNoAchievedRate() {
        StoreDeleteTarget broken = new ScriptedTarget() {
            @Override
            public CompletableFuture<Failure> store(byte[] id, byte[] body) {
                return CompletableFuture.completedFuture(new Failure("CONNECTION_LOST", "scripted"));
            }

            @Override
            public CompletableFuture<Failure> delete(byte[] id) {
                return CompletableFuture.completedFuture(new Failure("CONNECTION_LOST", "scripted"));
            }
        };

        LatencyAtRate.Result r = LatencyAtRate.run(broken, new byte[16], "b-", 500, 1);

        assertThat(r.errors()).isEqualTo(500);
        assertThat(r.deleteFailures()).isEqualTo(500);
        assertThat(r.latency().getTotalCount()).isZero();
        assertThat(r.achievedRate()).isZero();
        assertThat(r.percentileMillis(99)).isNaN();
    }
}
