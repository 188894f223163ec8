package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.replication.QueueReplica.Phase;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The answers of the nodes to a {@link QueueReplica}'s requests, and the outcome of the calls they
 * decide (part of the queue's state machine: single-threaded, state kept in the replica). A
 * mutation's answers are accounted per copy ({@link #account}: seq, or transaction number), and
 * the call completes once both members answered ({@link #completeIfAnswered}); a copy out of step
 * is marked NG ({@link MemberPaths#markNg}, via the replica). Reads complete from the one copy that
 * served them. {@link #dropped} ends what was sent to a member that is dropped.
 */
final class Answers {
    private final QueueReplica q;

    Answers(QueueReplica q) {
        this.q = q;
    }

    /**
     * SEQ_GAP: the copy did not take a seq we counted (a mutation it failed without taking its seq,
     * e.g. DISK_FULL). Nothing from the gap on was applied: the unanswered mutations are numbered
     * again from the copy's last seq and resent in order (the suffix). Its seq then differs from
     * the other copy's, which the next open's content check sees.
     */
    void resequence(Member m, long serverLast) {
        q.event(m.node + " answered SEQ_GAP at seq " + serverLast + " (we had sent up to " + m.sentSeq
                + "): the suffix is sent again from " + (serverLast + 1));
        q.commitPoint.renumbered(m, serverLast);
        q.catchUp.renumbered(m);
        List<Sent> again = new ArrayList<>(m.inflight);
        m.inflight.clear();
        for (int i = again.size() - 1; i >= 0; i--) {
            Sent x = again.get(i);
            q.core.forget(x.token);
            m.backlog.addFirst(x);
        }
        for (Sent x : m.backlog) {
            if (x.seq > serverLast) {
                x.seq = 0;
            }
        }
        m.sentSeq = serverLast;
        m.seq = serverLast;
        q.readCopy.diverged(m);
        q.paths.flushBacklog(m);
    }

    void onAnswer(Member m, Sent s, NodeResponse r) {
        if (!m.inflight.contains(s)) {
            return; // superseded by a path switch or an isolation
        }
        if (r.status() == Status.STORE_CHANGED) {
            // The client library would not re-open this handle after a reconnect: the node answers
            // from another store, it lost its disk (and the copy) before a heartbeat missed it.
            m.inflight.remove(s);
            q.paths.lostDisk(m, 0);
            dropped(m, s.op, null, "lost its disk");
            return;
        }
        if (r.status().isIndeterminate() || (!r.isOk() && r.txn() < 0 && s.op.kind.isMutation())) {
            // Unknown outcome, or refused before reaching the node (client backlog): retry on the
            // other path. The request stays where it is: the order of the stream must be kept.
            q.paths.pathFailed(m, m.path, r.status() + " " + r.reason());
            return;
        }
        m.lastAnswerAt = q.core.clock.nanoTime();
        if (r.status().isStoreFailure()) {
            q.records.storeRefused(m.node, r.status());
        } else if (s.op.kind == NodeOp.PUT && r.isOk()) {
            q.records.storeAccepted(m.node);
        }
        if (s.seq > 0 && r.status() == Status.SEQ_GAP) {
            if (r.value() < m.seq) {
                // Below a seq it already answered: the copy lost applied mutations (its server came
                // back without its journal, say). Not in sync, whatever its numbers.
                m.inflight.remove(s);
                q.paths.markNg(m, "copy at seq " + r.value() + " below the " + m.seq + " it had answered (SEQ_GAP)");
                dropped(m, s.op, null, "lost applied mutations"); // the other copy's answer decides
                return;
            }
            resequence(m, r.value());
            return;
        }
        m.inflight.remove(s);
        if (s.seq > 0 && r.status() == Status.SEQ_TOO_OLD) {
            q.paths.markNg(m, "its outcome of seq " + s.seq + " is no longer kept: " + r.reason());
            dropped(m, s.op, null, "outcome unknown");
            return;
        }
        if (r.status() == Status.STALE_EPOCH) {
            q.fence("STALE_EPOCH from " + m.node + ": " + r.reason());
            return;
        }
        ReplicaOp op = s.op;
        Status eff = r.status();
        if (op.kind.isMutation() || op.purpose == ReplicaOp.Purpose.RECORD) {
            eff = account(m, s, r);
            if (eff == null) {
                // The member disagreed and was isolated: its answer to this operation no longer
                // counts, as for everything else it had in flight (isolate dropped those; this one
                // had already left its in-flight list, and would otherwise wait for it forever).
                if (!q.members.contains(m)) {
                    dropped(m, op, null, "isolated");
                }
                return;
            }
        }
        if (op.purpose == ReplicaOp.Purpose.UNDO && eff == Status.NOT_FOUND) {
            eff = Status.OK; // the failed PUT never reached this copy: nothing to undo there
        }
        if (op.kind == NodeOp.CLEAR && r.isOk()) {
            m.damaged = false; // the server ends the DAMAGED mark at CLEAR: nothing left depends on lost records
        }
        switch (op.purpose) {
            case CLIENT, UNDO -> {
                if (op.kind.isMutation()) {
                    if (s.seq <= 0) {
                        op.answeredUnsequenced = m;
                    }
                    op.answers.put(m, r);
                    op.effective.put(m, eff);
                    op.answered(m);
                    completeIfAnswered(op);
                } else if (lostAppliedWrites(m, r) && !q.paths.isOnlyInSyncCopy(m)) {
                    // The copy answers from fewer mutations than it had applied: it lost data behind
                    // our open handle while its store kept its id (a handle is re-opened by itself
                    // only on the store that first answered it: an emptied one refuses, STORE_CHANGED).
                    // Nothing else would tell before the next write: rebuild it, and read from the other copy.
                    q.paths.markNg(m, op.kind + " answered at transaction " + r.txn() + ", below the " + m.txn
                            + " this copy had applied");
                    op.awaitNone();
                    q.readOp(op);
                } else {
                    completeRead(op, r, m);
                }
            }
            case RECORD -> {
                if (eff == Status.NOT_FOUND && r.status() == Status.NOT_FOUND) {
                    m.hasRecord = false; // the copy had lost it (cleared): put it back
                    m.predictedTxn++;
                    q.sending.sendTo(m, op, false);
                    return;
                }
                if (r.status() == Status.DUPLICATE_ID) {
                    m.hasRecord = true;
                    m.predictedTxn++;
                    q.sending.sendTo(m, op, false);
                    return;
                }
                op.answered(m);
                if (eff != Status.OK) {
                    q.paths.markNg(m, "record write refused: " + r.status());
                    return;
                }
                m.hasRecord = true;
                if (m.sync == SyncState.SYNC && !s.retried && r.isOk()) {
                    m.recordSeq = op.recordSeq;
                    m.recordTxn = r.txn();
                } else {
                    m.recordSeq = -1;
                }
                op.effective.put(m, Status.OK);
                q.recordSettled(op);
            }
            case CLEAR_TARGET -> {
                if (eff != Status.OK) {
                    q.paths.markNg(m, "clear refused: " + r.status());
                } else {
                    m.hasRecord = false;
                }
            }
            case MARKER -> {
                if (q.rebuild != null && op.rebuild == q.rebuild) {
                    q.rebuild.onMarker(r);
                }
            }
            case SOURCE_CHECK -> q.records.onSourceCheck(m, op, r);
            case ALIGN -> q.catchUp.onAligned(m, op, r);
            case COPY_READ -> {
                if (q.rebuild != null && op.rebuild == q.rebuild) {
                    q.rebuild.onBlock(r);
                }
            }
            case COPY -> {
                if (q.rebuild != null && op.rebuild == q.rebuild) {
                    q.rebuild.onCopied(op, r.status(), eff);
                }
            }
            case REBASE -> {
                if (!r.isOk() && q.members.contains(m)) {
                    q.paths.markNg(m, "rebase refused: " + r.status());
                }
            }
        }
    }

    /**
     * Transaction accounting of one mutation answer; returns the effective status, or null when the
     * copy disagreed and was marked NG.
     */
    Status account(Member m, Sent s, NodeResponse r) {
        ReplicaOp op = s.op;
        Status st = r.status();
        if (s.seq > 0) {
            // A sequenced answer is the mutation's one outcome, also for a repeat (which carries the
            // transaction number of the first time): no ambiguity, no transaction arithmetic.
            q.catchUp.answered(m, s, r);
            if (st.takesQueueSeq()) {
                // Not for STORAGE_ERROR: the copy did not take the seq, and its SEQ_GAP at the next
                // mutation is then a resend of the suffix (resequence), not a copy that lost what it
                // had applied. Counted, such a copy would be taken for one that lost data: isolated
                // and rebuilt in a loop. (DISK_FULL takes its seq: the server keeps it as a SKIP.)
                m.seq = Math.max(m.seq, s.seq);
            }
            m.txn = Math.max(m.txn, r.txn());
            return st;
        }
        if (r.txn() >= 0) {
            long expected = st == Status.OK ? m.txn + 1 : m.txn;
            if (m.txn >= 0 && r.txn() != expected) {
                String why = "transaction number " + r.txn() + " where " + expected + " was expected (" + op.kind + ")";
                if (m.sync == SyncState.SYNC && q.members.stream().noneMatch(x -> x != m && x.sync == SyncState.SYNC && !x.lost)) {
                    // The only in-sync copy cannot be thrown away: take its number as the truth
                    // and say so loudly (something else wrote to it, or our accounting broke).
                    q.event("ALARM: only in-sync copy " + m.node + ": " + why + "; re-based");
                    m.txn = r.txn();
                    m.recordSeq = -1;
                    return st;
                }
                q.paths.markNg(m, why);
                return null;
            }
            m.txn = r.txn();
        }
        NodeOp kind = op.purpose == ReplicaOp.Purpose.RECORD ? null : op.kind;
        if (s.retried && ((kind == NodeOp.PUT && st == Status.DUPLICATE_ID) || (kind == NodeOp.DELETE && st == Status.NOT_FOUND))) {
            // Maybe applied before the path switch, maybe not: the other copy's answer decides.
            op.addAmbiguous(m);
            return Status.OK;
        }
        if (m.sync == SyncState.REBUILDING && op.purpose == ReplicaOp.Purpose.CLIENT
                && (kind == NodeOp.DELETE || kind == NodeOp.REPLACE) && st == Status.NOT_FOUND) {
            // Not copied yet: the copier skips deleted ids and applies the replaced state. A deleted
            // message is then absent from both copies at once; a replaced one has its new state on
            // one copy only until copied, so that ack waits for the rebuild.
            op.awaitsCopy |= kind == NodeOp.REPLACE;
            op.addAmbiguous(m);
            return Status.OK;
        }
        if (op.purpose == ReplicaOp.Purpose.COPY && st == Status.DUPLICATE_ID) {
            return Status.OK;
        }
        if (op.purpose == ReplicaOp.Purpose.COPY && st == Status.NOT_FOUND && (kind == NodeOp.DELETE || kind == NodeOp.REPLACE)) {
            return Status.OK; // a catch-up's replayed change of a message put in the suffix: copied in its latest state
        }
        return st;
    }

    void completeIfAnswered(ReplicaOp op) {
        if (op.awaitsAny() || op.done) {
            return;
        }
        op.done = true;
        MemberMap<Status> eff = op.effective;
        if (!op.degraded && op.ambiguous.isEmpty() && eff.size() == 2 && eff.valueAt(0) == eff.valueAt(1)
                && q.members.contains(eff.keyAt(0)) && q.members.contains(eff.keyAt(1))) {
            completeAgreed(op, eff.valueAt(0)); // the usual case: two current copies, same answer
            return;
        }
        // Only answers of copies that are still members count: a copy isolated (and maybe cleared
        // for a rebuild) after it answered no longer holds anything we may promise.
        long current = op.effective.keySet().stream().filter(q.members::contains).count();
        if (op.degraded || current < 2) {
            // One copy applied it and the other was lost. The next rebuild copies everything the
            // survivor holds, so the mutation will be on two copies when it completes: the ack
            // waits for that instead of failing (bounded: see Timers.failParked).
            Member survivor = null;
            for (Map.Entry<Member, Status> e : op.effective.entrySet()) {
                if (q.members.contains(e.getKey()) && e.getKey().sync == SyncState.SYNC && e.getValue() == Status.OK
                        && !op.ambiguous.contains(e.getKey())) {
                    survivor = e.getKey();
                }
            }
            if (survivor != null && current == 1 && q.phase == Phase.READY) {
                op.parkedOn = survivor;
                op.parkedAt = q.core.clock.nanoTime();
                NodeResponse r = op.answers.get(survivor);
                op.deferredAck = new Ack(Status.OK, r.txn(), r.value(), null);
                q.parked.add(op);
                return;
            }
            op.ack.complete(Ack.failed(Status.TIMEOUT, "a copy was lost before answering: outcome unknown, not replicated"));
            return;
        }
        Set<Status> statuses = new HashSet<>();
        for (Map.Entry<Member, Status> e : op.effective.entrySet()) {
            if (!op.ambiguous.contains(e.getKey())) {
                statuses.add(e.getValue());
            }
        }
        if (statuses.isEmpty()) {
            statuses.add(Status.OK);
        }
        if (statuses.size() == 1) {
            Status decided = statuses.iterator().next();
            for (Member m : op.ambiguous) {
                op.effective.put(m, decided);
            }
            completeAgreed(op, decided);
            return;
        }
        if (refusedByFullStoreOnly(op) && !q.records.otherTargetAvailable()) {
            // One copy's store is full, the other had room (nodes rarely fill at the same PUT), and no
            // third node could take the full one's place. Both took the seq (the refusal as a SKIP),
            // so they stay in step: the PUT fails, is hidden from readers and undone on the copy that
            // took it (UncommittedPuts), and neither copy is isolated. Isolating the full one would
            // leave one copy, which refuses every write, the deletes that would make room included:
            // the queue could never drain (FullNodesDrainTest). With a third node the full copy is
            // isolated as below and the second copy moves there, so that intake goes on.
            Member full = null;
            for (Map.Entry<Member, Status> e : op.effective.entrySet()) {
                if (e.getValue() != Status.OK) {
                    full = e.getKey();
                }
            }
            q.event(full.node + " refused " + op.kind + " " + Ids.show(op.id) + " (DISK_FULL) that the other copy took: "
                    + (op.kind == NodeOp.PUT ? "the PUT fails and is undone"
                    : "it fails, the id is hidden until a write of it is acknowledged"));
            q.digestsApart = true;
            op.ack.complete(Ack.failed(Status.DISK_FULL, "the store of " + full.node + " is full: "
                    + op.answers.get(full).reason()));
            return;
        }
        // The copies disagree: trust a SYNC copy that applied it at its seq and rebuild the other one. A
        // copy that answered unsequenced (a rebuild target then, maybe SYNC by now) never decides against
        // one that answered in the seq stream: its PUT would stay at a rebuild target's own position, out
        // of the source's order and past every later rebuild's marker (store-full simulation, seed 3628).
        Member okSync = null;
        for (Map.Entry<Member, Status> e : op.effective.entrySet()) {
            if (e.getValue() == Status.OK && e.getKey().sync == SyncState.SYNC && e.getKey() != op.answeredUnsequenced) {
                okSync = e.getKey();
            }
        }
        List<Member> bad = new ArrayList<>();
        for (Map.Entry<Member, Status> e : op.effective.entrySet()) {
            Member m = e.getKey();
            if (okSync != null ? e.getValue() != Status.OK : m.sync == SyncState.REBUILDING || m == op.answeredUnsequenced) {
                bad.add(m);
            }
        }
        op.ack.complete(Ack.failed(Status.INTERNAL_ERROR, "copies disagree: " + op.effective));
        for (Member m : bad) {
            if (q.members.contains(m)) {
                q.paths.markNg(m, "answered " + op.effective.get(m) + " to " + op.kind + " " + (op.id == null ? "" : Ids.show(op.id))
                        + " where the other copy answered otherwise");
            }
        }
    }

    /**
     * A client PUT that one in-sync copy applied and the other refused with DISK_FULL, both at their
     * seq (sequenced: the refusal took the seq too), nothing ambiguous: the copies stay in step once
     * the failed PUT is undone. Also a replacing PUT (James's retry of a PUT whose outcome it did not
     * get, a repository storing a key again): it cannot be undone (it may have replaced an acknowledged
     * message), so its id stays hidden from this writer's readers (UncommittedPuts) until a write of
     * it is acknowledged on both copies, which James's retry of accepted mail does once there is room.
     */
    private boolean refusedByFullStoreOnly(ReplicaOp op) {
        if ((op.kind != NodeOp.PUT && op.kind != NodeOp.PUT_REPLACING) || op.purpose != ReplicaOp.Purpose.CLIENT || op.degraded || !op.ambiguous.isEmpty()
                || op.effective.size() != 2 || op.answeredUnsequenced != null) {
            return false;
        }
        int ok = 0;
        int full = 0;
        for (Map.Entry<Member, Status> e : op.effective.entrySet()) {
            Member m = e.getKey();
            if (!q.members.contains(m) || m.sync != SyncState.SYNC) {
                return false;
            }
            if (e.getValue() == Status.OK) {
                ok++;
            } else if (e.getValue() == Status.DISK_FULL) {
                full++;
            }
        }
        return ok == 1 && full == 1;
    }

    /** Both copies' answers agree on {@code st}: the call's ack (from the copy that serves reads). */
    void completeAgreed(ReplicaOp op, Status st) {
        Member rm = null;
        for (Member m : op.answers.keySet()) {
            if (rm == null || m == q.readCopy.current()) {
                rm = m;
            }
        }
        NodeResponse r = op.answers.get(rm);
        Ack ack = st == Status.OK ? new Ack(Status.OK, r.txn(), r.value(), null) : new Ack(st, r.txn(), 0, r.reason());
        if (op.awaitsCopy && st == Status.OK && q.rebuild != null) {
            op.deferredAck = ack;
            q.rebuild.deferred.add(op);
            return;
        }
        op.ack.complete(ack);
    }

    void completeRead(ReplicaOp op, NodeResponse r, Member servedBy) {
        op.done = true;
        switch (op.kind) {
            case GET -> op.get.complete(r.get() != null ? q.uncommitted.filter(op.id, r.get())
                    : new GetResult(r.status(), r.reason(), r.txn(), null));
            case READ -> {
                ReadResult rr = r.read();
                if (rr == null) {
                    rr = new ReadResult(r.status(), r.reason(), r.txn(), op.fromPosition, List.of());
                } else if (rr.messages().stream().anyMatch(x -> Ids.isReserved(x.id()))) {
                    List<StoredMessage> visible = rr.messages().stream().filter(x -> !Ids.isReserved(x.id())).toList();
                    rr = new ReadResult(rr.status(), rr.reason(), rr.txn(), rr.nextPosition(), visible);
                }
                op.read.complete(q.uncommitted.filter(rr).inPositionSpace(op.positionSpace));
            }
            case STAT -> {
                QueueStat qs = r.stat();
                if (qs == null) {
                    qs = new QueueStat(r.status(), r.reason(), r.txn(), 0, 0, 0, 0, Long.MAX_VALUE, 0, "");
                } else if (qs.isOk()) {
                    long hidden = servedBy != null && servedBy.hasRecord ? 1 : 0;
                    qs = new QueueStat(qs.status(), qs.reason(), qs.txn(), Math.max(0, qs.size() - hidden), qs.bytes(),
                            qs.firstPosition(), qs.nextPosition(), qs.earliestNotBefore(), qs.epoch(), qs.owner());
                }
                op.stat.complete(qs);
            }
            default -> throw new IllegalStateException(op.kind.toString());
        }
    }

    void failRead(ReplicaOp op, Status st, String reason) {
        op.done = true;
        if (op.get != null) {
            op.get.complete(new GetResult(st, reason, -1, null));
        } else if (op.read != null) {
            op.read.complete(new ReadResult(st, reason, -1, op.fromPosition, List.of()));
        } else if (op.stat != null) {
            op.stat.complete(new QueueStat(st, reason, -1, 0, 0, 0, 0, Long.MAX_VALUE, 0, ""));
        }
    }

    /**
     * A read's answer (OK, or a GET's NOT_FOUND) came from a queue whose transaction number is below
     * the member's: every mutation answered before the read on this connection counts in it, so a
     * copy that holds them all cannot answer lower.
     */
    static boolean lostAppliedWrites(Member m, NodeResponse r) {
        return (r.isOk() || r.status() == Status.NOT_FOUND) && m.txn >= 0 && r.txn() >= 0 && r.txn() < m.txn;
    }

    /**
     * One operation that was sent to a member that is dropped: it no longer waits for that member.
     * A mutation ends with {@code failWith}, or (null) is degraded: its outcome is decided by the
     * other copy (see {@link #completeIfAnswered}); a read goes to another in-sync copy.
     */
    void dropped(Member m, ReplicaOp op, Status failWith, String why) {
        op.answered(m);
        if (op.purpose == ReplicaOp.Purpose.RECORD) {
            q.recordSettled(op);
        }
        if (op.purpose == ReplicaOp.Purpose.CLIENT || op.purpose == ReplicaOp.Purpose.UNDO) {
            if (op.kind.isMutation()) {
                if (failWith != null && !op.done) {
                    op.done = true;
                    op.ack.complete(Ack.failed(failWith, why));
                } else {
                    op.degraded = true;
                    completeIfAnswered(op);
                }
            } else if (!op.done) {
                if (failWith == null && q.phase == Phase.READY) {
                    op.awaitNone();
                    q.readOp(op); // another in-sync copy, if any
                } else {
                    failRead(op, failWith == null ? Status.TIMEOUT : failWith, why);
                }
            }
        }
    }
}
