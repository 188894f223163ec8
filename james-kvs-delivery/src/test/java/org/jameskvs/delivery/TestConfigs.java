package org.jameskvs.delivery;

import java.util.HashMap;
import java.util.Map;

/** LaneDeliveryConfig from key=value pairs (as the mailet parameters would give them). */
public final class TestConfigs {
    private TestConfigs() {
    }

    public static LaneDeliveryConfig config(String... keyValues) {
        Map<String, String> parameters = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            parameters.put(keyValues[i], keyValues[i + 1]);
        }
        return LaneDeliveryConfig.from(parameters::get);
    }
}
