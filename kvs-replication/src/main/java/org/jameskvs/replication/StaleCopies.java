package org.jameskvs.replication;

import org.jameskvs.protocol.Status;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Copy hygiene (issue 10 item 6): a copy this writer isolated keeps its stale content on its node
 * until the writer, once two other copies are in sync again, clears it there. What stays is an
 * empty queue at the writer's epoch: the trace of an earlier open that the open procedure looks for
 * (see {@code OpenProcedure}), and no stale mail for an operator's listing, a disk, or a reader that
 * does not follow the newest replication record.
 *
 * <p>Only copies isolated while the other member was in sync and reachable are noted: that member
 * holds every acknowledged mutation, so the isolated copy holds nothing that is not also on it. A
 * copy given up in an ALARM (the only in-sync copy came back re-based, a DATA LOSS) is never
 * cleared: it may be what an operator recovers from. The notes end with the open (a reclaim finds
 * the copies again by their records) and when the node becomes a member again (a rebuild target).
 *
 * <p>Why clearing cannot hit a live copy: the clear goes through a new write handle (the next OPEN
 * generation of the writer's epoch). A rebuild that later picks the node opens it at a higher
 * generation, which the server makes refuse the older handle, so a late clear is refused, never
 * applied over a rebuilt copy; and a node is cleared only while it is no member.
 */
final class StaleCopies {
    private final QueueReplica replica;
    /** Node -> what the clear did (null: not tried yet), for the management table. */
    private final Map<String, String> noted = new LinkedHashMap<>();

    StaleCopies(QueueReplica replica) {
        this.replica = replica;
    }

    /** A copy isolated while the other member was in sync and reachable: clear it once safe. */
    void noteIsolated(String node) {
        noted.put(node, null);
    }

    /** The node is a member again (a rebuild target), or the copies are found again by an open. */
    void forget(String node) {
        noted.remove(node);
    }

    void forgetAll() {
        noted.clear();
    }

    /** The management table's note for an isolated copy on this node (empty when none). */
    String note(String node) {
        String s = noted.get(node);
        return s == null ? "" : s;
    }

    /**
     * Clears every noted copy whose node is up, if the queue has two in-sync reachable members now.
     * Called when a rebuild completes and when a node comes back.
     */
    void clearIfSafe() {
        if (!replica.twoCopiesInSync()) {
            return;
        }
        ReplicationCore core = replica.core;
        // A copy of the keys: a transport may answer at once, and the answer changes the notes.
        for (String node : new ArrayList<>(noted.keySet())) {
            if (!noted.containsKey(node) || noted.get(node) != null || replica.memberOn(node) != null
                    || !core.health(node).up()) {
                continue;
            }
            noted.put(node, "isolated, clearing");
            NodePath path = core.health(node).bestPath();
            NodeRequest open = NodeRequest.open(core.nextToken(), node, path, replica.name, true,
                    replica.wireEpoch(), replica.owner);
            core.send(open, resp -> {
                if (!resp.isOk()) {
                    settle(node, "stale copy not cleared: OPEN " + resp.status());
                    return;
                }
                if (replica.memberOn(node) != null) {
                    settle(node, null); // a member again meanwhile: its content is live now
                    return;
                }
                NodeRequest clear = new NodeRequest(core.nextToken(), node, path, replica.name, NodeOp.CLEAR,
                        null, 0, 0, null, null, 0, 0, 0, 0, 0, null, false);
                core.send(clear, c -> settle(node, c.status() == Status.OK
                        ? "stale copy cleared" : "stale copy not cleared: CLEAR " + c.status()));
            });
        }
    }

    private void settle(String node, String outcome) {
        if (!noted.containsKey(node)) {
            return;
        }
        if (outcome == null) {
            noted.remove(node);
            return;
        }
        replica.event(outcome + " on " + node);
        if (outcome.equals("stale copy cleared")) {
            noted.put(node, "isolated, stale copy cleared");
        } else {
            noted.put(node, null); // tried again when the node next comes back or a rebuild completes
        }
    }
}
