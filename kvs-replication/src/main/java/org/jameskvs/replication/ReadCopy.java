package org.jameskvs.replication;

import java.util.List;

/**
 * Which in-sync copy serves a {@link QueueReplica}'s reads, and its position space (see the
 * replica's doc, "Reads"): the same copy as long as it stays SYNC and reachable; a count of the
 * changes after which a reader's cursor is no longer valid (a switch to or from a copy that numbers
 * its own way, a copy whose seqs diverged, a reclaim). The copy is a member object, not a node name:
 * a copy isolated and later rebuilt on the same node (or found again by a reclaim) is a new member,
 * with new positions. Part of the queue's state machine: single-threaded.
 */
final class ReadCopy {
    private Member copy;
    private int changes;

    /** The copy serving reads now (null before the first open). */
    Member current() {
        return copy;
    }

    /** The position space: the number of changes so far, carried by every READ result. */
    int changes() {
        return changes;
    }

    /** An open or a reclaim found the copies: {@code first} serves; after a reclaim positions may be another copy's. */
    void opened(Member first) {
        if (copy != null) {
            changes++;
        }
        copy = first;
    }

    /** The copy to read from among {@code members}: the current one while it is SYNC and reachable; null: none. */
    Member choose(List<Member> members) {
        Member chosen = null;
        for (Member m : members) {
            if (m.sync == SyncState.SYNC && !m.lost) {
                if (m == copy) {
                    return m;
                }
                if (chosen == null) {
                    chosen = m;
                }
            }
        }
        if (chosen != null) {
            // A PUT's position is its seq on both sequenced copies: a cursor stays valid across the
            // switch unless one of them numbers its own way (unsequenced, or diverged).
            boolean same = copy != null && copy.sharesPositions() && chosen.sharesPositions();
            copy = chosen;
            if (!same) {
                changes++;
            }
        }
        return chosen;
    }

    /** The copy's seqs (its positions) stopped being the other's: a reader reading it, or switching to it, rescans. */
    void diverged(Member m) {
        m.positionsDiverged = true;
        if (m == copy) {
            changes++;
        }
    }
}
