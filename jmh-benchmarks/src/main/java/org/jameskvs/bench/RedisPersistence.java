package org.jameskvs.bench;

import java.util.List;

/** How a benchmark's Redis server persists writes: its command-line options. */
public enum RedisPersistence {
    /** No AOF, no snapshots: memory only. */
    NONE(List.of("--appendonly", "no")),
    /** AOF written before each reply, fsynced once a second in the background. */
    AOF_EVERYSEC(List.of("--appendonly", "yes", "--appendfsync", "everysec")),
    /** AOF fsynced before replies are sent (Redis groups the writes of one event-loop pass into one fsync). */
    AOF_ALWAYS(List.of("--appendonly", "yes", "--appendfsync", "always"));

    private final List<String> options;

    RedisPersistence(List<String> options) {
        this.options = options;
    }

    List<String> options() {
        return options;
    }
}
