package org.jameskvs.replication;

import org.jameskvs.protocol.Status;

/**
 * The queue's commit point carried to the servers (issue 10 item 3, the readers' side): per copy,
 * the highest seq up to which every sequenced mutation sent to it is settled, sent with the next
 * sequenced mutation (flag 0x0008) or, when nothing is left to carry it, in a COMMIT (right after
 * the answer that settled the copy's last mutation, and on the tick). The server
 * keeps it and READ and GET on read handles (read-only readers: {@link ReadOnlyReplica}, browse,
 * the OR-set repository's log readers) show no message above it, so a reader of one copy never sees
 * a PUT that is on that copy only, nor one that failed until its undo is through (after a reclaim
 * with undos pending, the commit point waits for them: it is unknown until then).
 *
 * <p>A mutation is <i>settled</i> once its call has its outcome (both copies answered, or it
 * failed), except a client PUT that failed and is to be undone ({@link UncommittedPuts}): it holds
 * the commit point until its undo is acknowledged (the undo's DELETE then removes it from the copies
 * before the readers get past it). Record writes never hold it (readers see the replication's own
 * record whatever the commit point). Kept per copy in that copy's seqs, which are its positions; a
 * copy whose seqs diverged has its own. At open, what the copies hold is taken as committed (the
 * previous writer's failed PUTs that it did not undo are among it: see the known limits). A rebuilt
 * copy takes its source's commit point and unsettled mutations at its REBASE.
 *
 * <p>Part of the queue's state machine: single-threaded, stateless, the state kept in the
 * {@link Member}s ({@code unsettled}, {@code committed}, {@code committedSent}).
 */
final class CommitPoint {
    private final QueueReplica q;

    CommitPoint(QueueReplica q) {
        this.q = q;
    }

    /** A sequenced mutation got its seq on this copy: @return the commit point to send with it (-1: none). */
    long sent(Member m, Sent s) {
        m.unsettled.addLast(s);
        advance(m);
        if (m.committed >= 0) {
            m.committedSent = Math.max(m.committedSent, m.committed);
        }
        return m.committed;
    }

    /** Moves the copy's commit point past every settled mutation at the head of its queue. */
    void advance(Member m) {
        if (m.committed < 0) {
            // Unknown: a reclaim found the copies while failed PUTs were still to undo (their seqs,
            // in what the copies hold, are not known): it starts once they are undone, below the
            // oldest mutation sent since.
            if (m.sentSeq < 0 || q.uncommitted.undosPending() > 0) {
                return;
            }
            m.committed = m.unsettled.isEmpty() ? m.sentSeq : m.unsettled.peekFirst().seq - 1;
        }
        while (!m.unsettled.isEmpty()) {
            Sent s = m.unsettled.peekFirst();
            if (!settled(s.op)) {
                return;
            }
            m.unsettled.pollFirst();
            m.committed = Math.max(m.committed, s.seq);
        }
    }

    private boolean settled(ReplicaOp op) {
        if (op.purpose == ReplicaOp.Purpose.RECORD) {
            return true;
        }
        return op.ack != null && op.ack.isDone() && !q.uncommitted.holdsCommit(op);
    }

    /** The copy will number again from {@code lastSeq}: what it was sent above that is not counted. */
    void renumbered(Member m, long lastSeq) {
        m.unsettled.removeIf(x -> x.seq > lastSeq);
    }

    /**
     * A rebuilt copy takes over its source's seqs at {@code baseSeq}: its commit point is the
     * source's (at most the base), and the source's unsettled mutations up to the base are its own.
     */
    void rebased(Member target, Member source, long baseSeq) {
        target.unsettled.clear();
        if (source == null || source.committed < 0) {
            target.committed = -1;
            return;
        }
        target.committed = Math.min(source.committed, baseSeq);
        for (Sent s : source.unsettled) {
            if (s.seq <= baseSeq) {
                target.unsettled.addLast(s);
            }
        }
    }

    /** On the tick: a copy whose commit point moved since it was last sent gets a COMMIT. */
    void tick() {
        push(false);
    }

    /**
     * After a sequenced mutation's answer (outside the state machine's processing of it): a copy
     * with nothing unsettled left, whose commit point moved, gets a COMMIT at once, so that readers
     * see an acknowledged PUT without waiting for the tick; under load the next mutation carries it.
     */
    void afterAnswer() {
        push(true);
    }

    private void push(boolean idleOnly) {
        if (q.phase != QueueReplica.Phase.READY) {
            return;
        }
        for (Member m : q.members) {
            if (m.sync != SyncState.SYNC || m.lost || !m.open || m.sentSeq < 0) {
                continue;
            }
            advance(m);
            if (m.committed < 0 || m.committed <= m.committedSent || idleOnly && !m.unsettled.isEmpty()) {
                continue;
            }
            long value = m.committed;
            m.committedSent = value;
            NodeRequest r = NodeRequest.commit(q.core.nextToken(), m.node, m.path, q.name, value);
            q.core.send(r, resp -> {
                if (resp.status() != Status.OK && m.committedSent == value) {
                    m.committedSent = -1; // sent again on a later tick (the server keeps the highest)
                }
            });
        }
    }
}
