package org.jameskvs.delivery;

import java.util.Collection;

import org.apache.james.metrics.api.GaugeRegistry;

/**
 * James metrics (webadmin /metrics) per lane, from the lane counters: one series per dedicated lane
 * (the busy destinations) and per bucket (the tail, grouped), so their number is bounded by
 * {@code maxQueues}. A lane queue's size is not read here (that would be a STAT per lane per scrape):
 * the KVS server exports it as {@code kvs_queue_size{queue}}.
 */
final class LaneMetrics {
    private LaneMetrics() {
    }

    static void register(GaugeRegistry gauges, Collection<LaneState> lanes) {
        for (LaneState state : lanes) {
            String lane = state.lane().name();
            LaneStats stats = state.stats();
            gauges.register("laneInFlight:" + lane, stats::inFlight);
            gauges.register("laneHeld:" + lane, stats::held);
            gauges.register("laneOpenConnections:" + lane, stats::openConnections);
            gauges.register("laneDelivered:" + lane, stats::delivered);
            gauges.register("laneDeferred:" + lane, stats::deferred);
            gauges.register("laneBounced:" + lane, stats::bounced);
            gauges.register("laneSuspended:" + lane, () -> state.suspension().suspendedUntil() != null ? 1 : 0);
            gauges.register("laneSuspendedDomains:" + lane, () -> state.suspendedDomains().size());
        }
    }
}
