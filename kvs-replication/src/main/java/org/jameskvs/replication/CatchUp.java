package org.jameskvs.replication;

import org.jameskvs.protocol.ContentDigest;
import org.jameskvs.protocol.Status;

/**
 * Recovery of a copy that comes back as a view change: the writer knows, per copy, the digest at
 * the seq the copy last answered (folded from its answers with kvs-protocol's
 * {@link ContentDigest}, starting from its OPEN answer); when a copy leaves while the other stays in
 * sync, the survivor's mutations from then on are kept in a {@link SeqLog}; when the copy comes
 * back and its OPEN answer's (last seq, digest) is one the log holds (its fencing epoch is ours: the
 * OPEN at our epoch succeeded), it is brought up by the suffix it missed (the log's DELETEs and
 * REPLACEs replayed, the suffix's messages copied from the survivor by position, then REBASE to the
 * survivor's (seq, digest): {@link Rebuild} in catch-up mode) instead of CLEAR and a full copy.
 * Otherwise (another digest: a wiped or damaged copy, one that lost acknowledged writes; a seq the
 * log does not hold; the log given up at its bound) it is rebuilt in full as before.
 *
 * <p>Only the writer that saw the copy leave holds the log: a new writer (reclaim, restart,
 * takeover) rebuilds a lagging copy in full. Part of the queue's state machine: stateless, the
 * state kept in the replica ({@code seqLog}) and its {@link Member}s ({@code digest}).
 */
final class CatchUp {
    private final QueueReplica q;

    CatchUp(QueueReplica q) {
        this.q = q;
    }

    boolean enabled() {
        return q.core.config.catchUpLogEntries() > 0;
    }

    // ------------------------------------------------------------------ the writer's digest per copy

    /** The copy holds {@code lastSeq} with {@code digest} (an OPEN answer, a REBASE). */
    void known(Member m, long lastSeq, long digest) {
        m.digestKnown = enabled() && lastSeq >= 0;
        m.digest = digest;
    }

    /** The copy's seqs were given again (SEQ_GAP): its digest is no longer followed, nor a log on it. */
    void renumbered(Member m) {
        m.digestKnown = false;
        if (q.seqLog != null && q.seqLog.survivor == m) {
            drop("the survivor " + m.node + " renumbered its seqs");
        }
    }

    /** A sequenced mutation's answer, before the member's seq moves: folds it into the copy's digest and the log. */
    void answered(Member m, Sent s, NodeResponse r) {
        if (m.digestKnown && s.seq > m.seq) {
            if (s.seq == m.seq + 1 && r.status().takesQueueSeq()) {
                m.digest = fold(m.digest, s.seq, s.op, r.status());
                s.op.answeredSeq = s.seq;
                s.op.answeredStatus = r.status();
            } else {
                m.digestKnown = false; // a seq not answered in order, or an outcome that took no seq
            }
        }
        SeqLog log = q.seqLog;
        if (log == null || log.survivor != m || s.seq <= log.lastSeq()) {
            return;
        }
        if (s.seq != log.lastSeq() + 1 || !r.status().takesQueueSeq()) {
            drop("seq " + s.seq + " answered out of order by " + m.node + " (" + r.status() + ")");
            return;
        }
        long after = fold(log.lastDigest(), s.seq, s.op, r.status());
        if (!log.append(after, r.status() == Status.OK ? change(s.seq, s.op) : null)) {
            drop("more than " + q.core.config.catchUpLogEntries() + " mutations since " + log.node + " left");
        }
    }

    // ------------------------------------------------------------------ aligning the digests after a full store's refusals

    /**
     * Two in-sync copies hold the same live messages but their digests differ: one refused a PUT (or
     * replacing PUT) for its full store that the other took, and that PUT is now undone (nothing left
     * in {@link UncommittedPuts}). Left apart, the next open would take them for different and rebuild
     * one in full, onto a node that may still be full. So once the queue is quiet (every mutation
     * sent to both answered, nothing held, parked or rebuilding) and the writer knows both digests at
     * the same seq, the copy that is not read from takes the other's digest with a conditional REBASE
     * that checks it is at exactly the (seq, digest) the writer computed for it: a copy that lost or
     * gained anything is not aligned (then the next open compares them and rebuilds as before).
     */
    void alignIfQuiet() {
        if (q.alignOp != null && !q.members.contains(q.alignTarget)) {
            q.alignOp = null; // its copy was dropped before it answered: the next open compares the copies
            q.digestsApart = false;
        }
        if (!q.digestsApart || q.alignOp != null || q.phase != QueueReplica.Phase.READY || q.opening != null
                || q.rebuild != null || q.members.size() != 2 || !q.parked.isEmpty() || !q.uncommitted.isEmpty()) {
            return;
        }
        for (Member m : q.members) {
            if (m.sync != SyncState.SYNC || m.lost || !m.open || !m.digestKnown || !m.inflight.isEmpty()
                    || !m.backlog.isEmpty() || !m.held.isEmpty() || m.seq != m.sentSeq) {
                return;
            }
        }
        Member a = q.members.get(0);
        Member b = q.members.get(1);
        if (a.seq != b.seq) {
            return;
        }
        if (a.digest == b.digest) {
            q.digestsApart = false;
            return;
        }
        Member target = b == q.readCopy.current() ? a : b;
        Member source = target == a ? b : a;
        ReplicaOp op = new ReplicaOp(NodeOp.ALIGN, ReplicaOp.Purpose.ALIGN, q.core.clock.nanoTime());
        op.fromPosition = target.seq;
        op.position = target.digest;
        op.readyBefore = source.digest;
        q.alignOp = op;
        q.alignTarget = target;
        q.sending.sendTo(target, op, false);
    }

    /** The conditional REBASE's answer: aligned, or left apart (the next open decides by content). */
    void onAligned(Member m, ReplicaOp op, NodeResponse r) {
        if (op != q.alignOp) {
            return;
        }
        q.alignOp = null;
        q.digestsApart = false;
        if (r.isOk()) {
            m.digest = op.readyBefore;
            q.event(m.node + " takes the other copy's digest at seq " + op.fromPosition
                    + ": equal content after its full store's refusals");
        } else {
            m.digestKnown = false;
            q.event(m.node + " not aligned at seq " + op.fromPosition + " (" + r.status() + " " + r.reason()
                    + "): the next open compares the copies");
        }
    }

    // ------------------------------------------------------------------ the log

    /** {@code gone} leaves (isolated for its silence) while {@code survivor} stays in sync: the log starts. */
    void departed(Member gone, Member survivor) {
        q.seqLog = null;
        if (!enabled() || !survivor.digestKnown || survivor.sync != SyncState.SYNC || !gone.sharesPositions()
                || !survivor.sharesPositions() || gone.sync != SyncState.SYNC) {
            return;
        }
        SeqLog log = fromWhereItStopped(gone, survivor);
        if (log == null) {
            log = new SeqLog(gone.node, survivor, survivor.seq, survivor.digest, q.core.config.catchUpLogEntries());
        }
        q.seqLog = log;
        q.event("catch-up log for " + gone.node + " kept from seq " + log.baseSeq);
    }

    /**
     * A log from the seq the copy that left last answered, when the survivor answered more: the
     * mutations in between are the ones the writer still holds for that copy (sent, unanswered),
     * each with the survivor's outcome; folded from the copy's digest they must end at the
     * survivor's, else null (the log then starts at the survivor's seq).
     */
    private SeqLog fromWhereItStopped(Member gone, Member survivor) {
        if (!gone.digestKnown || gone.seq >= survivor.seq || gone.seq < 0) {
            return null;
        }
        java.util.Map<Long, ReplicaOp> sent = new java.util.HashMap<>();
        for (java.util.ArrayDeque<Sent> list : java.util.List.of(gone.inflight, gone.backlog, gone.held)) {
            for (Sent s : list) {
                if (s.seq > gone.seq && s.seq <= survivor.seq) {
                    sent.put(s.seq, s.op);
                }
            }
        }
        SeqLog log = new SeqLog(gone.node, survivor, gone.seq, gone.digest, q.core.config.catchUpLogEntries());
        long digest = gone.digest;
        for (long seq = gone.seq + 1; seq <= survivor.seq; seq++) {
            ReplicaOp op = sent.get(seq);
            if (op == null || op.answeredSeq != seq || op.answeredStatus == null) {
                return null;
            }
            digest = fold(digest, seq, op, op.answeredStatus);
            if (!log.append(digest, op.answeredStatus == Status.OK ? change(seq, op) : null)) {
                return null;
            }
        }
        return digest == survivor.digest ? log : null;
    }

    void drop(String why) {
        if (q.seqLog != null) {
            q.event("catch-up log for " + q.seqLog.node + " given up: " + why);
            q.seqLog = null;
        }
    }

    /** Forgotten without a word (reclaim, close, fence, a rebuild onto another node). */
    void forget() {
        q.seqLog = null;
    }

    /** A rebuild of {@code target} from {@code source} could be a catch-up: the log is about that copy. */
    boolean candidate(Member source, String target) {
        SeqLog log = q.seqLog;
        if (log == null) {
            return false;
        }
        if (log.survivor == source && log.node.equals(target)) {
            return true;
        }
        forget();
        return false;
    }

    /**
     * The returning copy's OPEN answer: caught up by the suffix when its (seq, digest) is one the log
     * holds (and its server lost nothing of it), else rebuilt in full.
     */
    void decide(Rebuild r, NodeResponse open) {
        SeqLog log = q.seqLog;
        long seq = open.lastSeq();
        long digest = open.digest();
        if (log != null && !open.damaged() && log.matches(seq, digest)) {
            q.event("rebuild " + r.target.node + " from " + r.source.node + " by catch-up: its seq " + seq
                    + " and digest are the writer's: only the suffix after it is sent");
            r.catchUpFrom(seq);
            return;
        }
        String why = log == null ? "no catch-up log" : open.damaged() ? "copy DAMAGED"
                : "copy at seq " + seq + " digest " + Long.toHexString(digest) + ", not in the writer's " + log;
        q.seqLog = null;
        q.event("rebuild " + r.target.node + " from " + r.source.node + " in full (catch-up refused: " + why + ")");
        r.inFull();
    }

    // ------------------------------------------------------------------ the digest function, writer side

    /** The digest after {@code op} answered {@code st} at {@code seq} (as the server folds it: see ContentDigest). */
    static long fold(long digest, long seq, ReplicaOp op, Status st) {
        NodeOp kind = wireKind(op);
        int type = switch (kind) {
            case DELETE -> ContentDigest.DELETE;
            case REPLACE -> ContentDigest.REPLACE;
            case CLEAR -> ContentDigest.CLEAR;
            default -> ContentDigest.PUT;
        };
        if (st != Status.OK) {
            return ContentDigest.refused(digest, seq, type, st);
        }
        if (kind == NodeOp.CLEAR) {
            return ContentDigest.next(digest, seq, type, 0, 0);
        }
        if (!op.crcsKnown) {
            op.idCrc = ContentDigest.crc(op.id);
            op.contentCrc = switch (kind) {
                case DELETE -> 0;
                case REPLACE -> ContentDigest.contentCrc(op.priority & 0xFF, op.notBefore, op.state, null);
                default -> ContentDigest.contentCrc(op.priority & 0xFF, op.notBefore, op.state,
                        op.body == null ? new byte[0] : op.body);
            };
            op.crcsKnown = true;
        }
        return ContentDigest.next(digest, seq, type, op.idCrc, op.contentCrc);
    }

    /** What a sequenced mutation is on the wire (a record write is a replacing PUT, see Sending.transmit). */
    static NodeOp wireKind(ReplicaOp op) {
        return op.purpose == ReplicaOp.Purpose.RECORD ? NodeOp.PUT_REPLACING : op.kind;
    }

    /** What the returning copy must replay for an applied mutation (null: a plain PUT, copied instead). */
    static SeqLog.Change change(long seq, ReplicaOp op) {
        NodeOp kind = wireKind(op);
        if (kind == NodeOp.PUT || kind != NodeOp.CLEAR && op.id != null && Ids.isReserved(op.id)) {
            return null; // a plain PUT is copied; the replication's record is written again anyway
        }
        return switch (kind) {
            case DELETE, PUT_REPLACING, CLEAR -> new SeqLog.Change(seq, kind, op.id, 0, 0, null);
            case REPLACE -> new SeqLog.Change(seq, kind, op.id, op.priority, op.notBefore, op.state);
            default -> null;
        };
    }
}
