package org.jameskvs.replication;

import org.jameskvs.protocol.Status;
import org.jameskvs.replication.QueueReplica.Phase;

import java.util.ArrayList;
import java.util.List;

/**
 * The members of a {@link QueueReplica} and their paths: a path that fails switches the member to
 * its other path ({@link #pathFailed}, {@link #reopen}: a new OPEN, then the unanswered requests
 * again, in order), the reopen's answer is checked against what the copy must hold
 * ({@link #onOpenAnswer}), a node lost on both paths or a copy out of step is isolated or, the only
 * in-sync copy, kept ({@link #nodeLost}, {@link #markNg}, {@link #isolate}). Part of the queue's state
 * machine: single-threaded, state kept in the replica and its {@link Member}s.
 */
final class MemberPaths {
    private final QueueReplica q;

    MemberPaths(QueueReplica q) {
        this.q = q;
    }

    /** The member's path failed (timeout, connection lost, or heartbeat NG): switch paths or isolate. */
    void pathFailed(Member m, NodePath path, String why) {
        if (!q.members.contains(m) || m.lost || m.path != path || q.phase == Phase.FENCED || q.phase == Phase.CLOSED) {
            return;
        }
        NodeHealth h = q.core.health(m.node);
        NodePath other = path.other();
        boolean otherUsable = h.state(other) != NetState.NG;
        q.event(m.node + "/" + path + " failed (" + why + ")" + (otherUsable ? ": retry on " + other : ": node lost"));
        if (otherUsable) {
            reopen(m, other);
            q.core.pathNg(m.node, path);
        } else {
            q.core.pathNg(m.node, path);
            nodeLost(m, "both paths NG");
        }
    }

    /** New write handle on the given path; unanswered requests are sent again after it. */
    void reopen(Member m, NodePath path) {
        List<Sent> again = new ArrayList<>(m.inflight);
        m.inflight.clear();
        for (int i = again.size() - 1; i >= 0; i--) {
            Sent s = again.get(i);
            q.core.forget(s.token);
            s.retried = true;
            m.backlog.addFirst(s);
        }
        m.path = path;
        openMember(m);
    }

    void openMember(Member m) {
        if (m.openToken != 0) {
            q.core.forget(m.openToken);
            m.uncertain++; // the abandoned OPEN may still be applied (it is journaled: one transaction)
            m.openToken = 0;
        }
        m.open = false;
        if (q.gen >= Epochs.MAX_GEN) {
            // A wrapped generation would compare lower and fence ourselves: reclaim the queue at a
            // new counter on the next tick (out of whatever called us), as a restarted owner would.
            if (!q.generationsUsedUp) {
                q.generationsUsedUp = true;
                q.event("the " + Epochs.MAX_GEN + " OPEN generations of epoch " + Epochs.counter(q.epoch) + " are used up: reclaiming");
            }
            return;
        }
        m.wireEpoch = q.wireEpoch();
        // From this OPEN on, this copy's stream differs from the other's by a transaction (see
        // MembershipRecord): records sent from now on must not claim the copies equal.
        m.recordSeq = -1;
        // The copy's store, once known: a node that lost its disk refuses (STORE_CHANGED) instead of
        // taking this epoch on an emptied store, where a newer owner may have rebuilt the queue.
        NodeRequest r = NodeRequest.open(q.core.nextToken(), m.node, m.path, q.name, true, m.wireEpoch, q.owner, m.store);
        m.openToken = r.token();
        m.openSentAt = q.core.clock.nanoTime();
        q.core.send(r, resp -> onOpenAnswer(m, r.token(), resp));
    }

    void onOpenAnswer(Member m, long token, NodeResponse r) {
        if (m.openToken != token || !q.members.contains(m)) {
            return;
        }
        m.openToken = 0;
        boolean tainted = false;
        if (r.status() == Status.STORE_CHANGED) {
            lostDisk(m, 0);
            return;
        }
        if (r.isOk() && r.store() != 0 && m.store != r.store()) {
            if (m.store != 0) {
                lostDisk(m, r.store());
                return;
            }
            m.store = r.store();
            q.stores.put(m.node, m.store);
        }
        if (r.isOk()) {
            m.damaged = r.damaged();
            // The copy must hold everything it answered before, plus this OPEN (a write OPEN at a
            // new generation is journaled: one transaction), plus at most the requests and earlier
            // OPENs that were in flight: fewer means it lost data (restarted without its journal, or
            // lost unsynced writes), more means someone else wrote to it. Either way it is not in sync.
            long maybeApplied = m.uncertain + m.backlog.stream().filter(x -> x.retried && QueueReplica.isMutation(x.op)).count();
            long least = m.txn + 1;
            // A sequenced copy is checked by its seq, which OPENs do not move: it holds at least every
            // seq it answered and at most the ones we sent it. (Transactions: the count of OPENs that
            // may have been applied was a guess; seqs need none.)
            boolean bySeq = m.seq >= 0 && r.lastSeq() >= 0;
            boolean outside = bySeq ? r.lastSeq() < m.seq || r.lastSeq() > m.sentSeq
                    : m.txn >= 0 && (r.txn() < least || r.txn() > least + maybeApplied);
            if (outside) {
                String why = bySeq ? "copy reopened at seq " + r.lastSeq() + ", expected " + m.seq
                        + (m.sentSeq > m.seq ? ".." + m.sentSeq : "")
                        : "copy reopened at transaction " + r.txn() + ", expected " + least
                        + (maybeApplied > 0 ? ".." + (least + maybeApplied) : "");
                if (m.lost) {
                    m.lost = false; // it answered: no longer the unreachable authority, just a bad copy
                    m.sync = SyncState.NG;
                    q.event("DATA LOSS: " + m.node + " was the only in-sync copy; " + why);
                }
                if (!isOnlyInSyncCopy(m)) {
                    m.open = true;
                    markNg(m, why);
                    return;
                }
                // markNg keeps the only in-sync copy (it isolates the other one instead): its number
                // is the truth from now on. What waits on it to be resent goes out first, before the
                // record and the rebuild marker markNg sends: those calls would otherwise never end,
                // and the marker promises that whatever the source got before it is copied.
                q.event("ALARM: only in-sync copy " + m.node + ": " + why + "; re-based");
                m.open = true;
                m.uncertain = 0;
                m.recordSeq = -1;
                m.txn = r.txn();
                m.predictedTxn = m.txn + queuedMutations(m);
                if (bySeq) {
                    // Its seqs are not ours (someone else wrote, or it lost some): what waits is
                    // numbered anew from its last one, never taken for a repeat of a foreign seq.
                    m.backlog.forEach(x -> x.seq = 0);
                    q.readCopy.diverged(m);
                }
                rebaseSeq(m, r.lastSeq());
                q.catchUp.known(m, r.lastSeq(), r.digest());
                flushBacklog(m);
                markNg(m, why);
                return;
            }
            if (m.damaged && m.sync == SyncState.SYNC) {
                // Its server lost journal records of it (a node restarted with a damaged journal):
                // its transaction number may still be right while messages are missing or back.
                String why = "copy is DAMAGED (its server lost journal records of it)";
                if (!isOnlyInSyncCopy(m)) {
                    m.open = true;
                    markNg(m, why);
                    return;
                }
                q.event("ALARM: only in-sync copy " + m.node + ": " + why + "; served anyway, acknowledged messages"
                        + " may be missing or deleted ones back");
            }
            m.open = true;
            m.uncertain = 0;
            boolean known = m.txn >= 0;
            if (known && r.txn() == least) {
                // Only this OPEN advanced the copy: nothing in flight was applied (or it was refused,
                // which it will be again), so resending it is exact, not a retry.
                m.backlog.forEach(x -> x.retried = false);
            }
            if (known) {
                // This copy's number moved without the other's (the OPEN, maybe retried requests):
                // the record's proof that both copies applied the same must not outlive it.
                m.recordSeq = -1;
                tainted = true;
            }
            m.txn = r.txn();
            m.predictedTxn = m.txn + queuedMutations(m);
            rebaseSeq(m, r.lastSeq());
            q.catchUp.known(m, r.lastSeq(), r.digest());
            if (m.lost) {
                m.lost = false;
                q.event(m.node + " is back (txn " + m.txn + ")");
            } else if (known) {
                q.event(m.node + " reopened on " + m.path + " (txn " + m.txn + ")");
            }
            if (q.rebuild != null && q.rebuild.target == m && q.rebuild.awaitsDecision()) {
                q.catchUp.decide(q.rebuild, r); // by the suffix, or in full: before anything waiting goes out
            }
            flushBacklog(m);
            if (tainted && q.phase == Phase.READY) {
                q.records.writeRecord(); // on disk, the proof of equality must not outlive the retry
            }
            if (q.members.size() < 2 && q.rebuild == null) {
                q.records.writeRecord();
                q.records.startRebuildIfPossible(null);
            }
        } else if (r.status() == Status.STALE_EPOCH) {
            q.fence("STALE_EPOCH on OPEN at " + m.node);
        } else {
            if (r.status().isIndeterminate()) {
                m.uncertain++; // it may have reached the node and been applied
            }
            if (r.status().isStoreFailure()) {
                q.records.storeRefused(m.node, r.status()); // a write OPEN is journaled: a full disk refuses it too
            }
            if (m.lost) {
                return; // still away; the next node-up event tries again
            }
            pathFailed(m, m.path, "OPEN " + r.status());
        }
    }

    /**
     * After a reopen: the copy holds {@code lastSeq}; what waits to be resent keeps its seqs (those
     * up to it are answered as repeats), and new mutations follow the highest of them. Dropped
     * sends (a lost member's) leave no hole: the next seq follows what the copy holds.
     */
    static void rebaseSeq(Member m, long lastSeq) {
        if (lastSeq < 0) {
            return;
        }
        long pending = m.backlog.stream().mapToLong(x -> x.seq).max().orElse(0);
        m.seq = lastSeq;
        m.sentSeq = Math.max(lastSeq, pending);
        m.unsettled.removeIf(x -> x.seq > m.sentSeq); // dropped sends: their seqs are given again (CommitPoint)
    }

    static long queuedMutations(Member m) {
        return m.backlog.stream().filter(s -> s.op.kind.isMutation() || s.op.purpose == ReplicaOp.Purpose.RECORD).count();
    }

    /** What a rebuild target held back during the last re-append pass goes out now, in order, behind it. */
    void releaseHeld(Member m) {
        m.holding = false;
        while (!m.held.isEmpty()) {
            Sent s = m.held.poll();
            if (m.open) {
                q.sending.transmit(m, s);
            } else {
                m.backlog.add(s);
            }
        }
    }

    /**
     * The member's node answers from another store than the copy's: it lost its disk (restarted on
     * an empty data directory), and the copy with it, whatever its numbers say. It is never kept as
     * a copy, not even as the only in-sync one (the "ALARM ... re-based" case of a copy that merely
     * lost a suffix): re-basing on an empty store would make every acknowledged message vanish and
     * rebuild the other copy, when it comes back, from nothing. When it was the only in-sync copy
     * the queue is left without one, and the next tick reclaims it: the open then waits for the
     * other copy (see {@code OpenProcedure#newestRecordSurely}).
     *
     * @param store the store it answers from now; 0 when it refused our OPEN ({@code STORE_CHANGED}:
     *     nothing taken there), learnt from the next OPEN, which expects no store
     */
    void lostDisk(Member m, long store) {
        String why = m.node + " lost its disk (store " + Long.toHexString(m.store) + " now "
                + (store == 0 ? "another: STORE_CHANGED" : Long.toHexString(store)) + ")";
        if (store == 0) {
            q.stores.remove(m.node); // learnt from the next OPEN that expects none
        } else {
            q.stores.put(m.node, store);
        }
        m.store = store;
        m.lost = false;
        m.open = store != 0; // a refused OPEN left no handle there
        if (!isOnlyInSyncCopy(m)) {
            markNg(m, why);
            return;
        }
        // Not an ALARM: nothing acknowledged is lost as long as the other copy's node comes back.
        q.event(why + " while it held the only in-sync copy: the copy is not used; the queue waits for the node of"
                + " the other copy");
        m.sync = SyncState.NG;
        isolate(m, why);
    }

    /** Sends what waited for the member's handle, in order. */
    void flushBacklog(Member m) {
        while (!m.backlog.isEmpty() && m.open) {
            q.sending.transmit(m, m.backlog.poll());
        }
    }

    /** The member is SYNC and no other member is a reachable SYNC copy: it is never thrown away. */
    boolean isOnlyInSyncCopy(Member m) {
        Member other = q.otherMember(m);
        return m.sync == SyncState.SYNC && (other == null || other.sync != SyncState.SYNC || other.lost);
    }

    /**
     * A member's node is unreachable on both paths. If another SYNC copy is reachable, this copy is
     * isolated and replaced; otherwise it is the authority and is kept (writes refused) until it
     * comes back.
     */
    void nodeLost(Member m, String why) {
        if (!q.members.contains(m) || m.lost) {
            return;
        }
        Member other = q.otherMember(m);
        boolean otherSync = other != null && other.sync == SyncState.SYNC && !other.lost && q.core.health(other.node).up();
        if (m.sync == SyncState.SYNC && !otherSync) {
            q.event(m.node + " lost (" + why + "); it holds the only in-sync copy: writes refused until it is back");
            m.lost = true;
            q.timers.failParked(false, q.core.clock.nanoTime(), why);
            m.uncertain += m.inflight.stream().filter(x -> QueueReplica.isMutation(x.op)).count()
                    + m.backlog.stream().filter(x -> x.retried && QueueReplica.isMutation(x.op)).count();
            dropAll(m, null, why);
            if (other != null && other.sync == SyncState.REBUILDING) {
                isolate(other, "rebuild source lost");
            }
            return;
        }
        if (otherSync) {
            q.staleCopies.noteIsolated(m.node); // the other copy holds every acknowledged mutation
            q.catchUp.departed(m, other); // before isolate drops what was in flight to it
        }
        isolate(m, why);
        if (q.phase == Phase.READY) {
            q.records.writeRecord();
            q.records.startRebuildIfPossible(null);
        }
    }

    /** The copy disagrees with the other: NG, isolated, and the queue is re-synchronised onto a copy. */
    void markNg(Member m, String why) {
        if (!q.members.contains(m)) {
            return;
        }
        Member other = q.otherMember(m);
        if (isOnlyInSyncCopy(m)) {
            // Never throw away the only in-sync copy: drop the other (rebuilding) one instead.
            if (other != null) {
                isolate(other, "disagrees with the only in-sync copy " + m.node + " (" + why + ")");
                q.records.writeRecord();
                q.records.startRebuildIfPossible(null);
            }
            return;
        }
        if (other != null && other.sync == SyncState.SYNC && !other.lost) {
            q.staleCopies.noteIsolated(m.node); // the other copy holds every acknowledged mutation
        }
        isolate(m, "sync NG: " + why);
        if (q.phase == Phase.READY) {
            q.records.writeRecord();
            q.records.startRebuildIfPossible(null);
        }
    }

    void isolate(Member m, String why) {
        q.event("isolate " + m.node + " (" + why + ")");
        if (q.seqLog != null && (q.seqLog.survivor == m || m.sync == SyncState.REBUILDING && q.seqLog.node.equals(m.node))) {
            q.catchUp.drop(m.node + " isolated"); // the survivor gone, or a catch-up that failed: in full next time
        }
        q.members.remove(m);
        q.isolated.add(m.node);
        q.timers.failParked(false, q.core.clock.nanoTime(), why);
        if (q.rebuild != null && (q.rebuild.target == m || q.rebuild.source == m)) {
            Rebuild r = q.rebuild;
            q.rebuild = null;
            r.abort("rebuild aborted: " + why);
            if (r.target != m && q.members.contains(r.target)) {
                isolate(r.target, "rebuild source lost");
            }
        }
        dropAll(m, null, why);
    }

    /** Forgets everything in flight on a member; mutations waiting for it become "not replicated". */
    void dropAll(Member m, Status failWith, String why) {
        List<Sent> all = new ArrayList<>(m.inflight);
        all.addAll(m.backlog);
        all.addAll(m.held);
        m.inflight.clear();
        m.backlog.clear();
        m.held.clear();
        m.holding = false;
        if (m.openToken != 0) {
            q.core.forget(m.openToken);
            m.openToken = 0;
            m.uncertain++; // an OPEN in flight may still be applied (matters for a lost member that comes back)
        }
        m.open = false;
        for (Sent s : all) {
            q.core.forget(s.token);
            q.answers.dropped(m, s.op, failWith, why);
        }
    }
}
