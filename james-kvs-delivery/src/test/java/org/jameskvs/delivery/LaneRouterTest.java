package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

class LaneRouterTest {

    @Test
    void busyDomainsGetTheirOwnLaneAndTheTailIsHashedIntoBuckets() {
        LaneRouter router = new LaneRouter(TestConfigs.config("dedicatedDomains", "Gmail.com, yahoo.com", "buckets", "16"));
        assertThat(router.lanes()).hasSize(18);
        assertThat(router.laneOf("GMAIL.com")).isEqualTo(new Lane("lane-d-gmail.com", true));
        Set<String> bucketsUsed = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            Lane lane = router.laneOf("tail" + i + ".test");
            assertThat(lane.dedicated()).isFalse();
            assertThat(router.laneOf("tail" + i + ".test")).isEqualTo(lane);
            bucketsUsed.add(lane.name());
        }
        assertThat(bucketsUsed).hasSize(16);
    }

    @Test
    void moreQueuesThanTheBudgetIsRefused() {
        assertThatThrownBy(() -> TestConfigs.config("dedicatedDomains", "a.test,b.test", "buckets", "999"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxQueues");
    }

    @Test
    void badValuesNameTheirKey() {
        assertThatThrownBy(() -> TestConfigs.config("concurrency", "many"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("concurrency");
        assertThatThrownBy(() -> TestConfigs.config("retryDelays", "1s"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryDelays");
    }
}
