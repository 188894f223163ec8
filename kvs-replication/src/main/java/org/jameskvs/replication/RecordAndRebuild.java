package org.jameskvs.replication;

import org.jameskvs.protocol.Status;
import org.jameskvs.replication.QueueReplica.Phase;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The membership record a {@link QueueReplica} writes on its copies ({@link #writeRecord}, see
 * {@link MembershipRecord}), and the start and end of a rebuild of a second copy
 * ({@link #startRebuildIfPossible}, {@link #rebuildDone}; the copying itself is {@link Rebuild}'s).
 * Part of the queue's state machine: single-threaded, state kept in the replica.
 */
final class RecordAndRebuild {
    private final QueueReplica q;
    /** The source check in flight (null: none), and when it was sent. */
    private ReplicaOp sourceCheck;
    private long sourceCheckSentAt;
    /** The member a source check answered for (its node still holds its store): the next start may use it once. */
    private Member checkedSource;
    /** The preferred target of the start the check is for. */
    private String checkPreferred;
    RecordAndRebuild(QueueReplica q) {
        this.q = q;
    }

    /** Writes a new version of the record to every reachable member; null when there is none. */
    ReplicaOp writeRecord() {
        if (q.phase != Phase.READY) {
            return null;
        }
        List<Member> targets = new ArrayList<>();
        for (Member m : q.members) {
            if (!m.lost) {
                targets.add(m);
            }
        }
        if (targets.isEmpty()) {
            return null;
        }
        long refSeq = -1;
        if (targets.size() == 2 && targets.stream().allMatch(m -> m.sync == SyncState.SYNC)
                && targets.get(0).recordSeq >= 0 && targets.get(0).recordSeq == targets.get(1).recordSeq) {
            refSeq = targets.get(0).recordSeq;
        }
        List<MembershipRecord.Entry> entries = new ArrayList<>();
        for (Member m : targets) {
            entries.add(new MembershipRecord.Entry(m.node, m.sync, refSeq >= 0 ? m.recordTxn : -1, m.wireEpoch));
        }
        MembershipRecord rec = new MembershipRecord(q.epoch, ++q.recordSeq, q.owner, q.renewals, refSeq, entries, q.incarnation,
                new java.util.TreeMap<>(q.stores));
        ReplicaOp op = new ReplicaOp(NodeOp.REPLACE, ReplicaOp.Purpose.RECORD, q.core.clock.nanoTime());
        op.id = Ids.RECORD_ID;
        op.state = rec.encode();
        op.body = new byte[0];
        op.recordSeq = rec.seq();
        q.dispatch(op, targets);
        return op;
    }

    /** Starts rebuilding a second copy from the single SYNC one, on the preferred node or the next healthy one. */
    void startRebuildIfPossible(String preferred) {
        if (q.phase != Phase.READY || q.rebuild != null || q.members.size() != 1) {
            return;
        }
        Member source = q.members.get(0);
        if (source.sync != SyncState.SYNC || source.lost) {
            return;
        }
        Set<String> excluded = new HashSet<>();
        excluded.add(source.node);
        long now = q.core.clock.nanoTime();
        String target = preferred != null && usableTarget(preferred, now) ? preferred
                : q.core.placement.replacement(q.name, excluded, n -> usableTarget(n, now));
        if (target == null) {
            if (!q.noTargetReported) {
                q.noTargetReported = true;
                Set<String> refusing = q.core.refusingStores.nodes();
                q.event("no node can take a second copy" + (refusing.isEmpty() ? ""
                        : " (store refused writes on " + String.join(", ", refusing)
                        + ": retried after a wait)") + ": writes refused");
            }
            return;
        }
        q.noTargetReported = false;
        if ((q.isolated.contains(target) || q.unfencedAtOpen.contains(target)) && !sourceChecked(source, preferred)) {
            return; // a copy that left, or one the open did not see, may be the only whole one: see sourceChecked
        }
        q.unfencedAtOpen.remove(target);
        Member t = new Member(target, SyncState.REBUILDING, q.core.health(target).bestPath());
        q.members.add(t);
        q.isolated.remove(target);
        q.staleCopies.forget(target);
        q.rebuild = new Rebuild(q, source, t);
        if (q.catchUp.candidate(source, target)) {
            // The copy that left comes back: its OPEN answer's (seq, digest) decides between a
            // catch-up by the suffix and CLEAR plus a full copy (CatchUp.decide). Until then, and
            // during a catch-up, what else it should get is held and follows in order.
            // The marker is taken now, as a rebuild's last pass does: what is held for the copy from
            // here on follows the marker on the source too, so it is neither copied nor replayed.
            q.event("rebuild " + target + " from " + source.node + ": by catch-up if its seq and digest are the writer's");
            t.holding = true;
            t.hasRecord = true;
            q.rebuild.awaitDecision();
            q.paths.openMember(t);
            q.rebuild.start();
            q.rebuild.recordOp = writeRecord();
            return;
        }
        q.event("rebuild " + target + " from " + source.node);
        q.paths.openMember(t);
        // The target's stream: CLEAR (stale content out), the record, then live mutations and copies.
        ReplicaOp clear = new ReplicaOp(NodeOp.CLEAR, ReplicaOp.Purpose.CLEAR_TARGET, q.core.clock.nanoTime());
        t.predictedTxn++;
        q.sending.sendTo(t, clear, false);
        t.hasRecord = false;
        q.rebuild.recordOp = writeRecord();
        q.rebuild.start();
    }

    /**
     * Whether a node that holds no copy of the queue could take one now (up, not waiting after a
     * store failure): a copy whose store is full then moves there instead of staying a member.
     */
    boolean otherTargetAvailable() {
        Set<String> excluded = new HashSet<>();
        for (Member m : q.members) {
            excluded.add(m.node);
        }
        long now = q.core.clock.nanoTime();
        return q.core.placement.replacement(q.name, excluded, n -> usableTarget(n, now)) != null;
    }

    private boolean usableTarget(String node, long now) {
        return q.core.health(node).up() && q.core.refusingStores.mayRebuildOnto(node, now);
    }

    /**
     * A copy on {@code node} answered a store failure: no rebuild of any queue starts onto that node
     * for a while ({@link RefusingStores}: 1 s, doubling to 30 s while it keeps refusing); with a
     * third node the copy goes there instead. A PUT the node takes ends the wait ({@link #storeAccepted}).
     */
    void storeRefused(String node, Status status) {
        long wait = q.core.refusingStores.refused(node, q.core.clock.nanoTime());
        if (wait > 0) {
            q.event(node + " refused a write (" + status + "): no rebuild onto it for "
                    + TimeUnit.NANOSECONDS.toMillis(wait) + " ms");
        }
    }

    /**
     * The node's store took a PUT: it writes again, its next refusal waits 1 s. Not a completed
     * rebuild: a catch-up needs no PUT (REBASE, records), so a node that stays full would complete
     * one, refuse the next PUT, and start over at 1 s, about once a second for as long as it is full.
     */
    void storeAccepted(String node) {
        q.core.refusingStores.accepted(node);
    }

    /**
     * Whether the source's node is known to still hold the copy's store right now; if not, asks it
     * (a STAT, whose answer names the store) and says no: the rebuild starts when the answer comes.
     *
     * <p>Why: a rebuild CLEARs its target first, and a target that is a copy that left (isolated
     * before) may hold the only whole copy (it was down, nothing could be acknowledged without it,
     * and the source then lost its disk). If the source's node restarted on an empty disk and the
     * writer has not reopened it yet, its "SYNC" is stale: copying from it would empty the whole
     * copy (found by the simulation, seed 3576). The answer of a restarted node comes on a new
     * connection, so it names either the new store (the copy is gone: {@link MemberPaths#lostDisk})
     * or the copy's own. The same holds for a node the writer's open did not fence (it was down
     * then: it may hold the whole copy of the membership before that open, found by the simulation,
     * seed 5836: a takeover while that node was down, the source's disk then lost). Only such targets
     * are checked: a node the open fenced held no copy the open did not see, loses nothing to the
     * CLEAR, and its rebuild starts at once (mutations then park on it instead of failing while a
     * check is out).
     */
    private boolean sourceChecked(Member source, String preferred) {
        if (source.store == 0) {
            return true; // a server without store ids: as before
        }
        if (checkedSource == source) {
            checkedSource = null;
            return true;
        }
        long now = q.core.clock.nanoTime();
        if (sourceCheck != null && now - sourceCheckSentAt < q.core.config.requestTimeout().toNanos()) {
            return false;
        }
        checkPreferred = preferred;
        sourceCheck = new ReplicaOp(NodeOp.STAT, ReplicaOp.Purpose.SOURCE_CHECK, now);
        sourceCheckSentAt = now;
        q.sending.sendTo(source, sourceCheck, false);
        return false;
    }

    void onSourceCheck(Member m, ReplicaOp op, NodeResponse r) {
        if (op != sourceCheck) {
            return;
        }
        sourceCheck = null;
        if (!r.isOk() || r.stat() == null || !q.members.contains(m)) {
            return; // the next tick asks again
        }
        long store = r.stat().store();
        if (store != 0 && m.store != 0 && store != m.store) {
            q.paths.lostDisk(m, store);
            return;
        }
        checkedSource = m;
        startRebuildIfPossible(checkPreferred);
    }

    void rebuildDone(Rebuild r) {
        if (q.rebuild != r) {
            return;
        }
        q.rebuild = null;
        q.catchUp.forget(); // caught up or rebuilt: the copy no longer lags
        r.target.sync = SyncState.SYNC;
        ReplicaOp rebase = r.rebaseOp();
        if (rebase != null) {
            q.sending.sendTo(r.target, rebase, false); // ahead of the held mutations: the same ones then follow on both copies
            // From here the target's mutations carry seqs, continuing from the source's at the marker.
            r.target.seq = rebase.fromPosition;
            r.target.sentSeq = rebase.fromPosition;
            q.commitPoint.rebased(r.target, r.source, rebase.fromPosition);
            q.catchUp.known(r.target, rebase.fromPosition, rebase.readyBefore);
        }
        q.paths.releaseHeld(r.target);
        for (ReplicaOp op : r.deferred) {
            op.ack.complete(op.deferredAck);
        }
        // Mutations sent to the source before this rebuild began precede its marker in the
        // source's stream, so they were copied: they are now on both copies.
        for (Iterator<ReplicaOp> it = q.parked.iterator(); it.hasNext(); ) {
            ReplicaOp op = it.next();
            if (op.parkedOn == r.source && op.createdAt <= r.startedAt) {
                it.remove();
                op.ack.complete(op.deferredAck);
            }
        }
        q.event("rebuild of " + r.target.node + " done: " + (r.caughtUp()
                ? "caught up by the suffix, " + r.replayed + " change(s) replayed, " + r.copied + " message(s) copied"
                : r.copied + " message(s) copied"));
        writeRecord();
        q.staleCopies.clearIfSafe();
    }
}
