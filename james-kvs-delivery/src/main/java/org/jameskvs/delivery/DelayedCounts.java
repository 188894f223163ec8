package org.jameskvs.delivery;

import java.time.Clock;
import java.util.Map;
import java.util.TreeMap;

/**
 * How many of a lane's mails this node put back with a delay are not yet due: counts per due second,
 * so the admin route answers without reading the queue. Memory is one entry per distinct due second,
 * not per mail. Node-local: mail delayed by another node or before a restart is counted as ready.
 */
final class DelayedCounts {
    private final Clock clock;
    private final TreeMap<Long, Long> countBySecond = new TreeMap<>();

    DelayedCounts(Clock clock) {
        this.clock = clock;
    }

    synchronized void add(long dueEpochMillis) {
        countBySecond.merge(Math.floorDiv(dueEpochMillis + 999, 1000), 1L, Long::sum);
    }

    /** Mails still delayed now; forgets the seconds that have passed. */
    synchronized long pending() {
        long nowSecond = Math.floorDiv(clock.millis(), 1000);
        countBySecond.headMap(nowSecond, true).clear();
        long total = 0;
        for (Map.Entry<Long, Long> entry : countBySecond.entrySet()) {
            total += entry.getValue();
        }
        return total;
    }
}
