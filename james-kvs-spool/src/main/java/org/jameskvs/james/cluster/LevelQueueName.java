package org.jameskvs.james.cluster;

import java.util.Optional;

/**
 * The parts of a KVS queue name that holds one priority level of a James mail queue:
 * {@code <namespace>/queue/<james queue>@p<level>} (the layout {@code KvsSpoolConfiguration} documents).
 */
record LevelQueueName(String namespace, String jamesQueue, int level) {
    static final String QUEUES = "/queue/";
    static final String LEVEL = "@p";

    /** Empty for any other KVS queue (repositories, OR-set logs, foreign names). */
    static Optional<LevelQueueName> parse(String kvsName) {
        int queues = kvsName.indexOf(QUEUES);
        int level = kvsName.lastIndexOf(LEVEL);
        if (queues <= 0 || level <= queues + QUEUES.length()) {
            return Optional.empty();
        }
        try {
            int value = Integer.parseInt(kvsName.substring(level + LEVEL.length()));
            if (value < 0 || value > 9) {
                return Optional.empty();
            }
            return Optional.of(new LevelQueueName(kvsName.substring(0, queues),
                kvsName.substring(queues + QUEUES.length(), level), value));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    String kvsName() {
        return namespace + QUEUES + jamesQueue + LEVEL + level;
    }
}
