package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** The switches added for shared limits and MX grouping: defaults, and a clear error on bad input. */
class LaneDeliveryConfigTest {

    @Test
    void sharedLimitsAndMxGroupingAreOffByDefault() {
        LaneDeliveryConfig config = TestConfigs.config();
        assertThat(config.sharedLimits()).isFalse();
        assertThat(config.mxGrouping()).isFalse();
        assertThat(config.sharedLimitsMaxNodes()).isEqualTo(8);
        assertThat(config.sharedLimitsRefresh()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void aSwitchThatIsNeitherTrueNorFalseIsRefusedByName() {
        assertThatThrownBy(() -> TestConfigs.config("mxGrouping", "yes"))
            .isInstanceOf(IllegalArgumentException.class).hasMessage("mxGrouping must be true or false, was 'yes'");
        assertThatThrownBy(() -> TestConfigs.config("sharedLimitsMaxNodes", "0"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sharedLimitsMaxNodes must be at least 1");
    }
}
