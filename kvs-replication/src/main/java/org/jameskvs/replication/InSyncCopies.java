package org.jameskvs.replication;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which copies of a replicated queue a reader may read: the rule every reader follows, the
 * replication's own read-only reader ({@link ReadOnlyReplica}) and readers that hold plain
 * connections to every node (the OR-set repository's log readers).
 *
 * <p>Every node that has a queue of that name is not a copy of it: the writer's open fences every
 * node of the group by opening the queue there (an empty queue on a node that is not a copy), and a
 * copy that was isolated keeps its stale content on its node. A stale copy read forever brings back
 * what the current copies deleted. So a reader reads only the copies that the <b>newest</b>
 * replication record names SYNC (and that hold a record themselves: none means the node lost its
 * data). The newest record is known once all but one node of the group answered (the current
 * members are two nodes: one of them answered, and it holds the newest record); with no record
 * anywhere (a queue never written through replication) every copy counts, but only if every node
 * answered.
 */
public final class InSyncCopies {
    private InSyncCopies() {
    }

    /** Id of the replication's own record inside every copy (starts with a zero byte: never a mail's). */
    public static byte[] recordId() {
        return Ids.RECORD_ID.clone();
    }

    /**
     * The copies to read.
     *
     * @param nodes    the nodes whose copies may be read (never empty)
     * @param complete every node the newest record names SYNC is among them: what they all lack is
     *                 gone from the queue (a reader may conclude from absence, e.g. garbage collection)
     */
    public record Choice(Set<String> nodes, boolean complete) {
    }

    /**
     * @param holders   per node that has the queue and answered: the state of its record message, or
     *                  null when it holds none
     * @param answered  nodes that answered: the holders plus the nodes that said they have no such queue
     * @param groupSize nodes in the group
     * @return the copies to read, or null when the answers cannot tell (too few nodes answered, or
     * no copy named in sync answered): read nothing new, conclude nothing
     */
    public static Choice choose(Map<String, byte[]> holders, int answered, int groupSize) {
        MembershipRecord newest = null;
        for (byte[] state : holders.values()) {
            MembershipRecord rec = state == null ? null : MembershipRecord.decode(state);
            if (rec != null && rec.newerThan(newest)) {
                newest = rec;
            }
        }
        Set<String> out = new LinkedHashSet<>();
        if (newest == null) {
            if (answered < groupSize) {
                return null;
            }
            out.addAll(holders.keySet());
            return out.isEmpty() ? null : new Choice(Set.copyOf(out), true);
        }
        if (answered < groupSize - 1) {
            return null;
        }
        boolean complete = true;
        for (MembershipRecord.Entry e : newest.members()) {
            if (e.sync() != SyncState.SYNC) {
                continue;
            }
            byte[] own = holders.get(e.node());
            if (own != null && MembershipRecord.decode(own) != null) {
                out.add(e.node());
            } else {
                complete = false;
            }
        }
        return out.isEmpty() ? null : new Choice(Set.copyOf(out), complete);
    }

    /**
     * The copies to read once their servers' DAMAGED flags are known (kvs-protocol's QueueFlags: a
     * damaged copy may lack acknowledged messages or hold deleted ones): the intact ones of
     * {@code choice} when there is one; else the damaged ones all the same (the caller says so
     * loudly), no longer {@code complete}: absence on a copy that lost records proves nothing.
     */
    public static Choice preferIntact(Choice choice, Set<String> damaged) {
        Set<String> intact = new LinkedHashSet<>(choice.nodes());
        intact.removeAll(damaged);
        if (intact.size() == choice.nodes().size()) {
            return choice;
        }
        return intact.isEmpty() ? new Choice(choice.nodes(), false) : new Choice(Set.copyOf(intact), choice.complete());
    }
}
