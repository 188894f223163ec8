package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.QueueReplica.Phase;

import java.util.ArrayList;
import java.util.Iterator;

/**
 * The clock-driven part of a {@link QueueReplica} ({@link #tick}, every {@code tickMillis}): request
 * and OPEN timeouts, mutations parked on a survivor that fail when no rebuild progresses for
 * {@link #parkLimitNanos}, the lease renewal (a record write every {@code leaseRenew}), a rebuild or
 * a reclaim when copies are missing. Part of the queue's state machine: single-threaded, state kept
 * in the replica.
 */
final class Timers {
    private final QueueReplica q;

    Timers(QueueReplica q) {
        this.q = q;
    }

    void tick(long now) {
        long timeout = q.core.config.requestTimeout().toNanos();
        if (q.opening != null) {
            q.opening.tick(now);
            return;
        }
        if (q.phase != Phase.READY) {
            return;
        }
        if (q.generationsUsedUp) {
            q.reclaim(Status.TIMEOUT, "the epoch's OPEN generations are used up");
            return;
        }
        for (Member m : new ArrayList<>(q.members)) {
            if (q.phase != Phase.READY || q.opening != null) {
                break; // an earlier member's transition fenced the queue (an answer at once): no member left to time
            }
            if (!q.members.contains(m)) {
                continue; // isolated by an earlier member's transition of this tick (see checkMember)
            }
            checkMember(m, now, timeout);
        }
        if (!q.parked.isEmpty()) {
            failParked(false, now, "tick");
        }
        undoFailedPuts();
        q.catchUp.alignIfQuiet();
        q.commitPoint.tick();
        if (q.phase == Phase.READY && now - q.lastRenewAt >= q.core.config.leaseRenew().toNanos()) {
            q.lastRenewAt = now;
            q.renewals++;
            q.records.writeRecord();
        }
        if (q.phase == Phase.READY && q.members.size() < 2 && q.rebuild == null && q.members.stream().noneMatch(x -> x.lost)) {
            q.records.startRebuildIfPossible(null);
        }
        if (q.phase == Phase.READY && q.members.stream().noneMatch(x -> x.sync == SyncState.SYNC)
                && now >= q.nextReclaimAt) {
            // No copy is known to be in sync any more (all isolated): find the copies again, as a
            // restarted owner would (probe, fence with epoch + 1, records).
            if (q.reclaimFailure == null) {
                q.event("no in-sync copy left: reclaiming"); // once: then only the failures say it goes on
            }
            q.reclaim(QueueReplica.NOT_REPLICATED, "reclaiming the queue");
        }
    }

    /**
     * One member's timeouts on the tick: a lost one's reopen, an OPEN or a request silent for a
     * request timeout (a path switch, or the node lost), the stall check. Only for a current member:
     * the tick checks the members it started with, one after the other, and a transition run for one
     * of them may isolate the other (the rebuild source's request times out, its node is lost on both
     * paths, and {@link MemberPaths#nodeLost} keeps it as the only in-sync copy and isolates the rebuild
     * target: "rebuild source lost"). An isolated
     * copy has no handle and no OPEN under way by design ({@link MemberPaths#dropAll}): checking it
     * anyway took it for a stalled member and reopened it (an ALARM, and a write OPEN at a new
     * generation on a node that is no copy; seed 66054 of the simulation).
     */
    void checkMember(Member m, long now, long timeout) {
        if (m.lost) {
            // The unreachable authority: keep trying to reopen it while its node looks up.
            if (q.core.health(m.node).up() && (m.openToken == 0 || now - m.openSentAt > timeout)) {
                m.path = q.core.health(m.node).bestPath();
                q.paths.openMember(m);
            }
            return;
        }
        if (!m.open && m.openToken != 0 && now - m.openSentAt > timeout) {
            q.paths.pathFailed(m, m.path, "OPEN timed out");
            return;
        }
        if (stalled(m)) {
            return;
        }
        Sent oldest = m.inflight.peek();
        if (oldest != null && unanswered(m, oldest, now, timeout)) {
            q.paths.pathFailed(m, m.path, "request timed out");
        }
    }

    /**
     * Requests waiting for a member's handle must either be sent (handle open) or have an OPEN under
     * way that sends them: anything else would leave their calls to the adapter's backstop. Never
     * expected; repaired and reported as an ALARM if it happens.
     */
    boolean stalled(Member m) {
        if (m.open && !m.backlog.isEmpty()) {
            q.event("ALARM: " + m.node + " had " + m.backlog.size() + " request(s) waiting behind an open handle: sent");
            q.paths.flushBacklog(m);
            return true;
        }
        if (!m.open && m.openToken == 0) {
            q.event("ALARM: " + m.node + " had no handle and no OPEN under way: reopened");
            q.paths.openMember(m);
            return true;
        }
        return false;
    }

    /**
     * Parked mutations whose survivor is gone, or that waited too long, fail (outcome unknown). A
     * rebuild from their survivor that is still making progress is not "too long": when it completes
     * they are on two copies (a big queue takes longer to copy than 5 request timeouts, and failing
     * them then would tell the writer "unknown" about mutations that are applied).
     */
    void failParked(boolean all, long now, String why) {
        long limit = parkLimitNanos();
        for (Iterator<ReplicaOp> it = q.parked.iterator(); it.hasNext(); ) {
            ReplicaOp op = it.next();
            boolean gone = !q.members.contains(op.parkedOn) || op.parkedOn.lost || op.parkedOn.sync != SyncState.SYNC;
            boolean copying = q.rebuild != null && q.rebuild.source == op.parkedOn && q.rebuild.progressedWithin(now, limit);
            if (all || gone || (now - op.parkedAt > limit && !copying)) {
                it.remove();
                op.ack.complete(Ack.failed(all ? Status.TIMEOUT : Status.TIMEOUT,
                        "a copy was lost before answering and the queue was not re-replicated in time (" + why
                                + "): outcome unknown"));
            }
        }
    }

    /**
     * Whether the oldest request in flight to a copy counts as unanswered: the copy has been silent
     * for {@code requestTimeout} since it was sent (no answer to it nor to anything else of this
     * copy). A copy that keeps answering is alive and its answers come in request order, so the
     * oldest one is queued behind them (a client behind with its reading, a node's queue of work):
     * failing it over would only add a retry to the backlog. Bounded all the same, at the client
     * connection's own limit (3 request timeouts, counted from the last byte of ours the node
     * drained: a large frame still being sent is not lost), so that a request lost on a live
     * connection still ends.
     */
    static boolean unanswered(Member m, Sent oldest, long now, long timeout) {
        return now - Math.max(oldest.sentAt, m.lastAnswerAt) > timeout
                || now - Math.max(oldest.sentAt, m.lastSendProgressAt) > 3 * timeout;
    }

    /** How long a parked mutation waits for a rebuild to start, or a rebuild's next step. */
    long parkLimitNanos() {
        return q.core.config.requestTimeout().toNanos() * 5;
    }

    /** A rebuild of this queue made progress within the park limit: calls parked on it may wait. */
    boolean rebuildProgressing(long now) {
        return q.rebuild != null && q.rebuild.progressedWithin(now, parkLimitNanos());
    }

    /** Undos sent per tick at most: a burst of failures is undone over a few ticks, not in one go. */
    static final int UNDOS_PER_TICK = 64;

    /**
     * Undoes failed PUTs that may be on a copy (see {@link UncommittedPuts}, "Undo"): a DELETE of
     * each, through the normal sequenced path to both write members, once the queue can write.
     * Called by the tick (never from an answer's processing: an ack's callbacks send nothing).
     */
    void undoFailedPuts() {
        if (q.phase != Phase.READY || q.opening != null || q.openRecordOp != null || q.writeMembers().size() < 2) {
            return;
        }
        for (UncommittedPuts.Undo u : q.uncommitted.undosDue(UNDOS_PER_TICK)) {
            ReplicaOp op = new ReplicaOp(NodeOp.DELETE, ReplicaOp.Purpose.UNDO, q.core.clock.nanoTime());
            op.id = u.id();
            q.event("undo of failed PUT " + Ids.show(u.id()) + ": DELETE sent to " + q.writeMembers());
            q.mutate(op).whenComplete((a, e) -> {
                boolean ok = a != null && a.isOk();
                q.uncommitted.undone(u, ok);
                q.event("undo of failed PUT " + Ids.show(u.id()) + (ok ? ": done on both copies" : ": " + (a == null ? e : a.status() + " " + a.reason()) + ", sent again later"));
            });
        }
    }
}
