package org.jameskvs.james.queue;

import java.util.Comparator;
import java.util.List;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListSet;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.james.KvsQueues;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The KVS queues of one James mail queue: one per priority level actually used, named
 * {@code <namespace>/queue/<james queue>@p<level>}. A KVS queue is FIFO; keeping one per level gives
 * FIFO within a priority and lets readers serve higher levels first.
 */
final class PriorityLevels {
    private static final Logger LOGGER = LoggerFactory.getLogger(PriorityLevels.class);
    static final String LEVEL_SEPARATOR = "@p";

    private final KvsQueues queues;
    private final String baseName;
    /** The KVS queue name of each level, built once. */
    private final String[] names;
    private final NavigableSet<Integer> known = new ConcurrentSkipListSet<>(Comparator.reverseOrder());
    /** {@link #known} as a list, rebuilt only when a level is added (the readers ask for it per mail). */
    private volatile List<Integer> snapshot = List.of();
    private volatile boolean discovered;

    PriorityLevels(KvsQueues queues, String jamesQueueName) {
        this.queues = queues;
        this.baseName = queues.configuration().mailQueuePrefix() + jamesQueueName + LEVEL_SEPARATOR;
        this.names = new String[MailPriority.HIGHEST + 1];
        for (int level = MailPriority.LOWEST; level <= MailPriority.HIGHEST; level++) {
            names[level] = baseName + level;
        }
    }

    /**
     * Finds the levels created before (e.g. before a restart) and creates the normal one. A store that
     * cannot answer now (unreachable, restoring) is not an error of the James queue: it is logged, and
     * the readers call {@link #discoverIfNeeded()} until it works.
     */
    void discover() {
        try {
            discoverIfNeeded();
        } catch (RuntimeException e) {
            LOGGER.warn("Queue {}: cannot list or create its KVS queues now ({}); the reader retries", baseName, e.toString());
        }
    }

    /** Does {@link #discover()}'s work unless done already; throws when the store cannot answer. */
    void discoverIfNeeded() {
        if (discovered) {
            return;
        }
        for (String name : queues.existingNames(baseName)) {
            parseLevel(name.substring(baseName.length())).ifPresent(this::know);
        }
        queue(MailPriority.NORMAL);
        discovered = true;
    }

    KvsQueue queue(int level) {
        KvsQueue queue = queues.get(baseName + level);
        know(level);
        return queue;
    }

    /**
     * Like {@link #queue} without blocking: fails with the open's {@code KvsException}. Called once per
     * store and per delete: a level already known gets the open handle as it is (no name built, no stage
     * added).
     */
    CompletableFuture<KvsQueue> open(int level) {
        boolean inRange = level >= MailPriority.LOWEST && level <= MailPriority.HIGHEST;
        CompletableFuture<KvsQueue> handle = queues.open(inRange ? names[level] : baseName + level);
        if (snapshot.contains(level)) {
            return handle;
        }
        return handle.thenApply(queue -> {
            know(level);
            return queue;
        });
    }

    private void know(int level) {
        if (known.contains(level)) {
            return;
        }
        synchronized (known) { // add and snapshot together, or a concurrent add could be lost from it
            if (known.add(level)) {
                snapshot = List.copyOf(known);
            }
        }
    }

    /** Levels in use, highest first. */
    List<Integer> levels() {
        return snapshot;
    }

    /** The James queue name of a KVS queue name under {@code prefix}, if it is a level queue. */
    static Optional<String> jamesQueueName(String kvsName, String prefix) {
        int separator = kvsName.lastIndexOf(LEVEL_SEPARATOR);
        if (!kvsName.startsWith(prefix) || separator < prefix.length()
            || parseLevel(kvsName.substring(separator + LEVEL_SEPARATOR.length())).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(kvsName.substring(prefix.length(), separator));
    }

    private static Optional<Integer> parseLevel(String suffix) {
        try {
            int level = Integer.parseInt(suffix);
            return level >= MailPriority.LOWEST && level <= MailPriority.HIGHEST ? Optional.of(level) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
