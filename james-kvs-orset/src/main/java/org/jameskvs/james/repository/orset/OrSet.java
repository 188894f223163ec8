package org.jameskvs.james.repository.orset;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The pure core: an add-wins observed-remove set of keys (Shapiro et al.'s op-based OR-set, as used
 * by the IMAP-CRDT of Jungnickel et al.), each surviving add carrying a payload. No I/O, no clock,
 * no threads: deterministic; not thread-safe ({@link LocalReplica} guards it).
 *
 * <p><b>State</b>: the live adds (key, tag, payload) and the removed tags (tombstones).
 * <b>Add</b>(key, t): unless t is removed, t becomes live. <b>Remove</b>(T): every tag of T becomes
 * removed (and is no longer live). A key is present iff it has a live tag.
 *
 * <p><b>Why no causal delivery is needed.</b> The op-based OR-set of the paper assumes a reliable
 * causal-order broadcast, because a remove must not be applied before the adds it observed. Here the
 * operations travel through per-node KVS logs read independently, so a replica may read a remove
 * before the add it removes. Keeping the removed tags makes every pair of operations commute anyway:
 * live = {adds} minus {removed tags} is a function of the <i>set</i> of delivered operations, so
 * order and duplicates do not matter (tags are unique, so "minus" never hides a later add). The
 * price is the tombstones: {@link #forgetTombstone} and {@link #dropLive} let the repository
 * collect them, under the rules in {@link GarbageCollector} (never on their own: they are only
 * sound once the tag's ADD can no longer be delivered).
 *
 * <p><b>Add wins</b>: a remove only names the tags it observed, so an add concurrent with it (not
 * observed) survives.
 */
public final class OrSet<P> {
    /** A live add. */
    public record Entry<P>(String key, Tag tag, long timestamp, P payload) {
    }

    /** Which live add of a key a retrieve returns: the newest (source clock), then the highest tag. */
    public static final Comparator<Entry<?>> WINNER = Comparator.<Entry<?>>comparingLong(Entry::timestamp)
        .thenComparing(Entry::tag);

    private final TreeMap<String, NavigableMap<Tag, Entry<P>>> live = new TreeMap<>();
    private final Map<Tag, String> keyOfLiveTag = new HashMap<>();
    private final Set<Tag> removed = new HashSet<>();

    /** Applies a delivered operation (idempotent, commutative). Returns true if the state changed. */
    public boolean apply(OrSetOp<P> op) {
        if (op instanceof OrSetOp.Add<P> add) {
            boolean changed = removeTags(add.supersedes());
            if (removed.contains(add.tag()) || keyOfLiveTag.containsKey(add.tag())) {
                return changed;
            }
            live.computeIfAbsent(add.key(), k -> new TreeMap<>())
                .put(add.tag(), new Entry<>(add.key(), add.tag(), add.timestamp(), add.payload()));
            keyOfLiveTag.put(add.tag(), add.key());
            return true;
        }
        return removeTags(((OrSetOp.Remove<P>) op).tags());
    }

    private boolean removeTags(Set<Tag> tags) {
        boolean changed = false;
        for (Tag tag : tags) {
            changed |= removed.add(tag);
            String key = keyOfLiveTag.remove(tag);
            if (key != null) {
                NavigableMap<Tag, Entry<P>> entries = live.get(key);
                entries.remove(tag);
                if (entries.isEmpty()) {
                    live.remove(key);
                }
            }
        }
        return changed;
    }

    /** At the source: a store of {@code key}, superseding the tags of the key observed here. */
    public OrSetOp.Add<P> prepareAdd(String key, Tag tag, long timestamp, P payload) {
        return new OrSetOp.Add<>(key, tag, timestamp, observedTags(key), payload);
    }

    /** At the source: a remove of the tags of {@code key} observed here; empty if the key is absent. */
    public Optional<OrSetOp.Remove<P>> prepareRemove(String key, Tag id) {
        Set<Tag> tags = observedTags(key);
        return tags.isEmpty() ? Optional.empty() : Optional.of(new OrSetOp.Remove<>(id, tags));
    }

    /** At the source: removes of every observed tag, at most {@code maxTagsPerOp} tags each. */
    public List<OrSetOp.Remove<P>> prepareRemoveAll(Supplier<Tag> ids, int maxTagsPerOp) {
        List<OrSetOp.Remove<P>> ops = new ArrayList<>();
        List<Tag> chunk = new ArrayList<>();
        for (Tag tag : new TreeSet<>(keyOfLiveTag.keySet())) {
            chunk.add(tag);
            if (chunk.size() == maxTagsPerOp) {
                ops.add(new OrSetOp.Remove<>(ids.get(), Set.copyOf(chunk)));
                chunk.clear();
            }
        }
        if (!chunk.isEmpty()) {
            ops.add(new OrSetOp.Remove<>(ids.get(), Set.copyOf(chunk)));
        }
        return ops;
    }

    /** The live tags of {@code key}. */
    public Set<Tag> observedTags(String key) {
        NavigableMap<Tag, Entry<P>> entries = live.get(key);
        return entries == null ? Set.of() : Set.copyOf(entries.keySet());
    }

    public boolean contains(String key) {
        return live.containsKey(key);
    }

    /** The live add a retrieve of {@code key} returns (deterministic: {@link #WINNER}). */
    public Optional<Entry<P>> winner(String key) {
        NavigableMap<Tag, Entry<P>> entries = live.get(key);
        return entries == null ? Optional.empty() : entries.values().stream().max(WINNER);
    }

    /** The present keys, sorted. */
    public List<String> keys() {
        return List.copyOf(live.keySet());
    }

    public int size() {
        return live.size();
    }

    public boolean isRemoved(Tag tag) {
        return removed.contains(tag);
    }

    public boolean isLive(Tag tag) {
        return keyOfLiveTag.containsKey(tag);
    }

    /** Number of tombstones (metadata that only garbage collection could shrink). */
    public int removedCount() {
        return removed.size();
    }

    /**
     * Garbage collection: forgets the tombstone of {@code tag}. Sound only once the ADD of
     * {@code tag} can never be delivered here again (see {@link GarbageCollector}). Returns true
     * if there was one.
     */
    public boolean forgetTombstone(Tag tag) {
        return removed.remove(tag);
    }

    /**
     * Garbage collection: drops the live add {@code tag} without leaving a tombstone. Sound only once
     * the ADD of {@code tag} is known to be gone from its log, which its writer does only after the
     * tag was removed (see {@link GarbageCollector}). Returns true if it was live.
     */
    public boolean dropLive(Tag tag) {
        String key = keyOfLiveTag.remove(tag);
        if (key == null) {
            return false;
        }
        NavigableMap<Tag, Entry<P>> entries = live.get(key);
        entries.remove(tag);
        if (entries.isEmpty()) {
            live.remove(key);
        }
        return true;
    }

    /** Every live add (a copy). */
    public List<Entry<P>> entries() {
        List<Entry<P>> out = new ArrayList<>(keyOfLiveTag.size());
        live.values().forEach(entries -> out.addAll(entries.values()));
        return out;
    }

    /** The abstract state, for comparing replicas: key -> live tags. */
    public Map<String, Set<Tag>> liveTags() {
        Map<String, Set<Tag>> out = new TreeMap<>();
        live.forEach((key, entries) -> out.put(key, Collections.unmodifiableSet(new TreeSet<>(entries.keySet()))));
        return out;
    }

    /** The removed tags, for comparing replicas. */
    public Set<Tag> removedTags() {
        return Collections.unmodifiableSet(new TreeSet<>(removed));
    }
}
