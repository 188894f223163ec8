package org.jameskvs.delivery;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.zip.CRC32;

/**
 * Which lane a recipient domain's mail goes to: the dedicated lane of a configured busy domain, else
 * the bucket chosen by the CRC32 of the domain (stable across restarts and James nodes, so every node
 * puts a domain's mail in the same queue). With {@code mxGrouping} a tail domain's bucket is chosen
 * by its MX group instead (its best MX host), so domains sharing MX hosts share a lane and its limits.
 * The set of lanes is fixed by the configuration, within {@code maxQueues}.
 */
public final class LaneRouter {
    private final Map<String, Lane> dedicated = new TreeMap<>();
    private final List<Lane> buckets = new ArrayList<>();
    private final UnaryOperator<String> bucketKey;

    /** Buckets keyed by domain. */
    public LaneRouter(LaneDeliveryConfig config) {
        this(config, UnaryOperator.identity());
    }

    /** Buckets keyed by {@code bucketKey} of the (lower-case) domain, e.g. its MX group. */
    LaneRouter(LaneDeliveryConfig config, UnaryOperator<String> bucketKey) {
        this.bucketKey = bucketKey;
        for (String domain : config.dedicatedDomains()) {
            dedicated.put(domain, new Lane(config.queuePrefix() + "d-" + domain, true));
        }
        int digits = String.valueOf(config.buckets() - 1).length();
        for (int i = 0; i < config.buckets(); i++) {
            buckets.add(new Lane(config.queuePrefix() + "b-" + String.format(Locale.ROOT, "%0" + digits + "d", i), false));
        }
    }

    public Lane laneOf(String domain) {
        String key = domain.toLowerCase(Locale.ROOT);
        Lane lane = dedicated.get(key);
        if (lane != null) {
            return lane;
        }
        CRC32 crc = new CRC32();
        crc.update(bucketKey.apply(key).getBytes(StandardCharsets.UTF_8));
        return buckets.get((int) (crc.getValue() % buckets.size()));
    }

    /** Every lane: the dedicated ones, then the buckets. */
    public List<Lane> lanes() {
        List<Lane> all = new ArrayList<>(dedicated.values());
        all.addAll(buckets);
        return all;
    }
}
