package org.jameskvs.spoolbench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The machine-wide steal time the spool benchmark records per phase (`steal_s`). */
class ProcStatsTest {
    private final ProcStats stats = new ProcStats(100);

    @Test
    void stealIsTheEighthCounterOfTheCpuLineInSeconds() {
        assertThat(stats.stealOf("cpu  327346 0 87241 192113 1529 0 17043 12299 0 0")).isEqualTo(122.99);
    }

    @Test
    void aLineWithoutAStealCounterGivesNaNNotZero() {
        assertThat(stats.stealOf("cpu  327346 0 87241 192113 1529 0 17043")).isNaN();
        assertThat(stats.stealOf("intr 1 2 3 4 5 6 7 8 9")).isNaN();
    }

    @Test
    void thisMachinesCounterReadsAndNeverGoesBack() {
        double first = stats.stealSeconds();
        assertThat(first).as("/proc/stat of a Linux kernel that counts steal").isGreaterThanOrEqualTo(0);
        assertThat(stats.stealSeconds()).isGreaterThanOrEqualTo(first);
    }
}
