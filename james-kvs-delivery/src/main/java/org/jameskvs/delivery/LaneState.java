package org.jameskvs.delivery;

import java.util.function.LongSupplier;

/** Everything known about one lane on this node: its queue size, counters, delayed counts and suspension. */
public record LaneState(Lane lane, int concurrency, LongSupplier queueSize, LaneStats stats, DelayedCounts delayed,
                        SuspensionRule suspension) {
}
