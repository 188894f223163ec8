package org.jameskvs.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Test JVMs side by side (surefire's forkCount 2) must never hand out the same port: each draws from
 * the block of its fork number, so two forks' ports are disjoint.
 */
class FreePortsTest {
    private final String before = System.getProperty(FreePorts.FORK_NUMBER_PROPERTY);

    @AfterEach
    void restoreForkNumber() {
        if (before == null) {
            System.clearProperty(FreePorts.FORK_NUMBER_PROPERTY);
        } else {
            System.setProperty(FreePorts.FORK_NUMBER_PROPERTY, before);
        }
    }

    @Test
    void forksDrawFromDisjointBlocks() {
        Range first = drawAs("1", 200);
        Range second = drawAs("2", 200);
        assertThat(first.max).as("fork 1's ports %s lie below fork 2's %s", first, second).isLessThan(second.min);
        assertThat(first.min).isGreaterThanOrEqualTo(10_000);
    }

    @Test
    void anUnsetOrUnreadableForkNumberIsTheFirstBlock() {
        System.clearProperty(FreePorts.FORK_NUMBER_PROPERTY);
        assertThat(FreePorts.forkBlock()).isZero();
        System.setProperty(FreePorts.FORK_NUMBER_PROPERTY, "${surefire.forkNumber}");
        assertThat(FreePorts.forkBlock()).isZero();
        System.setProperty(FreePorts.FORK_NUMBER_PROPERTY, String.valueOf(FreePorts.FORK_BLOCKS + 2));
        assertThat(FreePorts.forkBlock()).isEqualTo(1);
    }

    private static Range drawAs(String forkNumber, int count) {
        System.setProperty(FreePorts.FORK_NUMBER_PROPERTY, forkNumber);
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < count; i++) {
            ports.add(FreePorts.next());
        }
        assertThat(ports).as("never the same port twice").hasSize(count);
        return new Range(ports.stream().mapToInt(Integer::intValue).min().orElseThrow(),
                ports.stream().mapToInt(Integer::intValue).max().orElseThrow());
    }

    private record Range(int min, int max) {
    }
}
