package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/** Refuse at the high-water mark, accept again at the low one; the size is read at most once a second. */
class BacklogGateTest {
    private final AtomicLong size = new AtomicLong();
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final BacklogGate gate = new BacklogGate(new LaneDeliveryConfig.WaterMarks(100, 80), size::get, now::get, 1_000);

    private boolean refusesAt(long queued) {
        size.set(queued);
        now.addAndGet(1_000);
        return gate.refuses();
    }

    @Test
    void hysteresisBetweenTheMarks() {
        assertThat(refusesAt(99)).isFalse();
        assertThat(refusesAt(100)).isTrue();
        assertThat(refusesAt(90)).as("still above the low-water mark").isTrue();
        assertThat(refusesAt(80)).isFalse();
        assertThat(refusesAt(95)).as("below the high-water mark again").isFalse();
    }

    @Test
    void theSizeIsReadAtMostOncePerRefresh() {
        assertThat(refusesAt(100)).isTrue();
        size.set(0);
        now.addAndGet(999);
        assertThat(gate.refuses()).as("cached").isTrue();
        now.addAndGet(1);
        assertThat(gate.refuses()).isFalse();
    }

    @Test
    void anUnreadableSizeKeepsTheLastDecision() {
        assertThat(refusesAt(100)).isTrue();
        assertThat(refusesAt(-1)).isTrue();
    }

    @Test
    void marksAreReadWithDefaultsAndChecked() {
        assertThat(LaneDeliveryConfig.waterMarks(key -> null)).isEqualTo(new LaneDeliveryConfig.WaterMarks(100_000, 80_000));
        Map<String, String> parameters = new HashMap<>(Map.of("laneHighWater", "50", "laneLowWater", "60"));
        assertThatThrownBy(() -> LaneDeliveryConfig.waterMarks(parameters::get)).hasMessageContaining("laneLowWater");
    }
}
