package org.jameskvs.james.repository.orset;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * This node's replica of the repository: an {@link OrSet} of {@link MailRef}s, shared by the James
 * calls, the reading of the logs and the garbage collector. {@link OrSet} is not thread-safe: every
 * method here is one critical section on this object, so a step that must see a consistent state
 * (e.g. applying a block of operations, or checking a batch of tags) is one call.
 */
final class LocalReplica {
    private final OrSet<MailRef> set = new OrSet<>();

    synchronized long size() {
        return set.size();
    }

    synchronized List<String> keys() {
        return set.keys();
    }

    synchronized boolean contains(String key) {
        return set.contains(key);
    }

    synchronized Optional<OrSet.Entry<MailRef>> winner(String key) {
        return set.winner(key);
    }

    /** The live keys and tags (tests: convergence). */
    synchronized Map<String, Set<Tag>> liveTags() {
        return set.liveTags();
    }

    synchronized int tombstoneCount() {
        return set.removedCount();
    }

    synchronized OrSetOp.Add<MailRef> prepareAdd(String key, Tag tag, long timestamp, MailRef payload) {
        return set.prepareAdd(key, tag, timestamp, payload);
    }

    synchronized Optional<OrSetOp.Remove<MailRef>> prepareRemove(String key, Tag id) {
        return set.prepareRemove(key, id);
    }

    synchronized List<OrSetOp.Remove<MailRef>> prepareRemoveAll(Supplier<Tag> ids, int maxTagsPerOp) {
        return set.prepareRemoveAll(ids, maxTagsPerOp);
    }

    synchronized void apply(OrSetOp<MailRef> op) {
        set.apply(op);
    }

    /** Applies a block of operations read from a log, at once. */
    synchronized void applyAll(List<OrSetOp<MailRef>> ops) {
        for (OrSetOp<MailRef> op : ops) {
            set.apply(op);
        }
    }

    /** The live tags whose mail is in {@code log}. */
    synchronized Set<Tag> liveTagsIn(String log) {
        Set<Tag> tags = new HashSet<>();
        for (OrSet.Entry<MailRef> entry : set.entries()) {
            if (entry.payload().log().equals(log)) {
                tags.add(entry.tag());
            }
        }
        return tags;
    }

    /** Those of {@code tags} that are removed here (tombstones). */
    synchronized Set<Tag> removedAmong(Collection<Tag> tags) {
        Set<Tag> removed = new HashSet<>();
        for (Tag tag : tags) {
            if (set.isRemoved(tag)) {
                removed.add(tag);
            }
        }
        return removed;
    }

    /** The ids of the records none of whose tags is known here any more (neither live nor a tombstone). */
    synchronized List<Tag> recordsNamingNoKnownTag(Map<Tag, Set<Tag>> tagsByRecord) {
        List<Tag> ids = new ArrayList<>();
        for (Map.Entry<Tag, Set<Tag>> e : tagsByRecord.entrySet()) {
            if (e.getValue().stream().noneMatch(t -> set.isRemoved(t) || set.isLive(t))) {
                ids.add(e.getKey());
            }
        }
        return ids;
    }

    /** At most {@code limit} tombstones, in tag order. */
    synchronized List<Tag> tombstones(int limit) {
        return set.removedTags().stream().limit(limit).toList();
    }

    /** See {@link OrSet#forgetTombstone}: only under the garbage collector's rules. */
    synchronized boolean forgetTombstone(Tag tag) {
        return set.forgetTombstone(tag);
    }

    /** See {@link OrSet#dropLive}: only under the garbage collector's rules. Returns the tags that were live. */
    synchronized List<Tag> dropLive(Collection<Tag> tags) {
        List<Tag> dropped = new ArrayList<>();
        for (Tag tag : tags) {
            if (set.dropLive(tag)) {
                dropped.add(tag);
            }
        }
        return dropped;
    }
}
