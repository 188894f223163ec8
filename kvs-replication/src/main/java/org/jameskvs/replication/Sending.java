package org.jameskvs.replication;

/**
 * How a {@link QueueReplica}'s requests reach a member: held behind a rebuild target's last
 * re-append pass, kept in the member's backlog while its path is being opened, or transmitted at
 * once, a mutation to an in-sync copy with the copy's next seq and the commit point. Part of the
 * queue's state machine: single-threaded, state kept in the replica and its members.
 */
final class Sending {
    private final QueueReplica q;

    Sending(QueueReplica q) {
        this.q = q;
    }

    void sendTo(Member m, ReplicaOp op, boolean retried) {
        Sent s = new Sent(q, m, op, retried);
        if (m.holding && op.rebuild == null) {
            m.held.add(s); // a rebuild target's last re-append pass runs first (see Rebuild)
            return;
        }
        if (!m.open) {
            m.backlog.add(s);
            return;
        }
        transmit(m, s);
    }

    void transmit(Member m, Sent s) {
        ReplicaOp op = s.op;
        NodeOp kind = op.kind;
        byte[] state = op.state;
        long committed = -1;
        if (s.seq == 0 && QueueReplica.isMutation(op) && op.rebuild == null && sequencing(m)) {
            // The copy's next seq; kept by the Sent, so a retry on the other path repeats it exactly.
            s.seq = ++m.sentSeq;
            committed = q.commitPoint.sent(m, s);
        } else if (s.seq > 0) {
            q.commitPoint.advance(m);
            committed = m.committed;
        }
        if (op.purpose == ReplicaOp.Purpose.RECORD) {
            // Sequenced: one replacing PUT whether or not the copy holds the record, so that the
            // copies get the same mutation under the same seq (no per-copy PUT/REPLACE resend).
            kind = s.seq > 0 ? NodeOp.PUT_REPLACING : m.hasRecord ? NodeOp.REPLACE : NodeOp.PUT;
        }
        long position = op.position;
        if (position == 0 && s.seq == 0 && op.rebuild == null && m.sync == SyncState.REBUILDING
                && (kind == NodeOp.PUT || kind == NodeOp.PUT_REPLACING)) {
            // A rebuild target's own PUTs (the record, live mutations, which the re-append passes
            // move to the source's positions) are numbered far above any position of the source,
            // so the copies, which carry the source's positions, never meet one of them.
            position = Rebuild.OWN_POSITIONS_FROM + ++m.ownPositions;
        }
        NodeRequest r = new NodeRequest(q.core.nextToken(), m.node, m.path, q.name, kind, op.id, op.priority,
                op.notBefore, state, kind == NodeOp.PUT || kind == NodeOp.PUT_REPLACING
                        ? (op.body == null ? new byte[0] : op.body) : op.body,
                op.fromPosition, op.maxCount, op.maxBytes, op.readyBefore, 0, null, false, s.seq, position,
                s.seq > 0 ? committed : -1);
        s.token = r.token();
        s.sentAt = q.core.clock.nanoTime();
        m.inflight.add(s);
        q.core.send(r, s);
    }

    /**
     * Mutations to this copy carry its queue seq (see the protocol's sequenced mutations): an
     * in-sync copy whose seq is known. A rebuild target gets them unsequenced until its REBASE.
     */
    private static boolean sequencing(Member m) {
        return m.sync == SyncState.SYNC && m.sentSeq >= 0;
    }
}
