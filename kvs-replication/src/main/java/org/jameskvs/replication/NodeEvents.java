package org.jameskvs.replication;

/**
 * The heartbeat's verdicts on a node, as they concern one {@link QueueReplica}: a path NG switches a
 * member to its other path, both paths NG lose the member, a node back reopens its copy (or leaves
 * the trace of a queue created while it was down, and lets a missing copy be rebuilt). Part of the
 * queue's state machine: single-threaded, state kept in the replica.
 */
final class NodeEvents {
    private final QueueReplica q;

    NodeEvents(QueueReplica q) {
        this.q = q;
    }

    void onPathDown(String node, NodePath path) {
        Member m = q.memberOn(node);
        if (m != null && !m.lost && m.path == path) {
            q.paths.pathFailed(m, path, "heartbeat");
        }
    }

    void onNodeDown(String node) {
        Member m = q.memberOn(node);
        if (m != null) {
            q.paths.nodeLost(m, "heartbeat: both paths NG");
        }
    }

    void onNodeUp(String node) {
        if (q.phase != QueueReplica.Phase.READY) {
            return;
        }
        if (q.untraced.remove(node) && q.memberOn(node) == null) {
            leaveTrace(node);
        }
        q.staleCopies.clearIfSafe();
        Member m = q.memberOn(node);
        if (m != null && m.lost) {
            m.path = q.core.health(node).bestPath();
            q.paths.openMember(m); // on OK: back, then a partner is rebuilt
            return;
        }
        if (q.members.size() < 2 && q.rebuild == null) {
            q.records.startRebuildIfPossible(null);
        }
    }

    /**
     * Opens the queue for writing on a node that is no copy and was down at creation (an empty queue
     * at this writer's epoch: the trace OpenProcedure's check looks for). Best effort: a node that
     * misses it only narrows what a later open can tell, see the open's known limits.
     */
    private void leaveTrace(String node) {
        NodeRequest open = NodeRequest.open(q.core.nextToken(), node, q.core.health(node).bestPath(), q.name, true,
                q.wireEpoch(), q.owner);
        q.core.send(open, resp -> q.event(resp.isOk() ? "trace of the queue left on " + node + " (down at creation)"
                : "no trace left on " + node + ": " + resp.status()));
    }
}
