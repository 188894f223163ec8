package org.jameskvs.james.repository.orset;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The OR-set specification the property tests check every site against, computed from the set of
 * issued operations alone: a tag is live unless some operation removed (or superseded) it; per key
 * the winner is the live ADD with the largest (timestamp, tag).
 */
record OrSetSpec(Map<String, Set<Tag>> live, Set<Tag> removed, Map<String, Optional<Tag>> winner) {
    static OrSetSpec of(List<OrSetOp<Integer>> ops) {
        Set<Tag> removed = new TreeSet<>();
        for (OrSetOp<Integer> op : ops) {
            if (op instanceof OrSetOp.Remove<Integer> remove) {
                removed.addAll(remove.tags());
            } else {
                removed.addAll(((OrSetOp.Add<Integer>) op).supersedes());
            }
        }
        Map<String, Set<Tag>> live = new TreeMap<>();
        Map<String, OrSetOp.Add<Integer>> best = new HashMap<>();
        for (OrSetOp<Integer> op : ops) {
            if (op instanceof OrSetOp.Add<Integer> add && !removed.contains(add.tag())) {
                live.computeIfAbsent(add.key(), k -> new TreeSet<>()).add(add.tag());
                best.merge(add.key(), add, (a, b) -> compare(a, b) >= 0 ? a : b);
            }
        }
        Map<String, Optional<Tag>> winner = new HashMap<>();
        best.forEach((key, add) -> winner.put(key, Optional.of(add.tag())));
        return new OrSetSpec(live, removed, winner);
    }

    private static int compare(OrSetOp.Add<Integer> a, OrSetOp.Add<Integer> b) {
        int c = Long.compare(a.timestamp(), b.timestamp());
        return c != 0 ? c : a.tag().compareTo(b.tag());
    }
}
