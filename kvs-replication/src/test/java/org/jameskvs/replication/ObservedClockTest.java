package org.jameskvs.replication;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Observed time: the real time minus the reader's own standstills beyond the allowance. */
class ObservedClockTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private long real = 1_000 * MS;
    private final ObservedClock clock = new ObservedClock(() -> real, 100 * MS);

    @Test
    void readsWithinTheAllowanceCountInFull() {
        long start = clock.nanoTime();
        for (int i = 0; i < 40; i++) {
            real += 50 * MS; // a tick every 50 ms
            clock.nanoTime();
        }
        real += 100 * MS; // exactly the allowance: still observed
        assertThat(clock.nanoTime() - start).isEqualTo(2_100 * MS);
        assertThat(clock.pausedNanos()).isZero();
    }

    @Test
    void aStandstillCountsOnlyUpToTheAllowanceAndTimeNeverGoesBack() {
        long start = clock.nanoTime();
        real += 4_500 * MS; // the reader's thread stood still 4.5 s (GC, starvation, blocked loop)
        long after = clock.nanoTime();
        assertThat(after - start).isEqualTo(100 * MS);
        assertThat(clock.pausedNanos()).isEqualTo(4_400 * MS);
        real += 50 * MS;
        assertThat(clock.nanoTime() - after).isEqualTo(50 * MS);
        long last = clock.nanoTime();
        assertThat(clock.nanoTime()).isGreaterThanOrEqualTo(last);
    }
}
