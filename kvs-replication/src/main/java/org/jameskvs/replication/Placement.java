package org.jameskvs.replication;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.zip.CRC32;

/**
 * Where a queue lives: a deterministic function of the configuration and the queue name (paper
 * III.A: nodes are chosen "from a group of KVS modules with a set configuration, not using hash
 * distribution on request"). Computed when a queue is opened or a copy must be replaced, never per
 * request.
 */
final class Placement {
    private final ReplicationConfig config;
    private final List<String> group;

    Placement(ReplicationConfig config) {
        this.config = config;
        this.group = config.nodeNames();
    }

    List<String> group() {
        return group;
    }

    /** The configured pair of a queue. */
    List<String> pair(String queue) {
        List<String> explicit = config.placementOverrides().get(queue);
        if (explicit != null) {
            return explicit;
        }
        int first = start(queue);
        return List.of(group.get(first), group.get((first + 1) % group.size()));
    }

    /**
     * The replacement for a lost copy: the next node of the group, in group order starting after the
     * queue's first placed node, that holds no copy yet and is usable.
     */
    String replacement(String queue, Collection<String> excluded, Predicate<String> usable) {
        int first = group.indexOf(pair(queue).get(0));
        for (int i = 1; i <= group.size(); i++) {
            String n = group.get((Math.max(first, 0) + i) % group.size());
            if (!excluded.contains(n) && usable.test(n)) {
                return n;
            }
        }
        return null;
    }

    /**
     * Where a new queue goes, in order of preference: the queue's pair (rule or explicit), then the
     * rest of the group in group order after the pair's first node. A new queue is created on the
     * first two of these that answered, so a node of the pair that is down is skipped.
     */
    List<String> orderFrom(String queue) {
        List<String> pair = pair(queue);
        int first = group.indexOf(pair.get(0));
        List<String> out = new ArrayList<>(pair);
        for (int i = 0; i < group.size(); i++) {
            String n = group.get((Math.max(first, 0) + i) % group.size());
            if (!out.contains(n)) {
                out.add(n);
            }
        }
        return out;
    }

    private int start(String queue) {
        if (config.placementRule() == ReplicationConfig.PlacementRule.FIRST_TWO) {
            return 0;
        }
        CRC32 crc = new CRC32();
        crc.update(queue.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % group.size());
    }
}
