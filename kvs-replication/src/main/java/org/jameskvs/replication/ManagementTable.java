package org.jameskvs.replication;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The paper's management table (Table I): per queue and node, the network state of the active (A)
 * and standby (S) path, the sync state and the transaction number. An immutable snapshot for
 * metrics and the admin command that prints it.
 */
public record ManagementTable(List<Row> rows, Map<String, NetState[]> nodes) {

    /** One copy of one queue. {@code txn} is -1 when unknown (isolated); {@code epoch} is the writer's epoch counter. */
    public record Row(String queue, String node, NetState networkA, NetState networkS, SyncState sync, long txn,
                      long epoch, String note) {
        /** False for a node an outsider's table shows holding the queue without being a copy of it. */
        public boolean copy() {
            return !note.equals(NOT_A_COPY) && !note.equals(NO_RECORD);
        }
    }

    /** Note of a row read by an outsider ({@code ReplicatedQueueOpener.peekTable}): the record does not name the node. */
    public static final String NOT_A_COPY = "not a copy";
    /** Note of a row read by an outsider: the node holds the queue, no replication record names its copies. */
    public static final String NO_RECORD = "no replication record";

    public ManagementTable {
        rows = List.copyOf(rows);
        nodes = Map.copyOf(nodes);
    }

    /** The table as text, one row per copy. */
    public String format() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%-28s %-10s %-6s %-6s %-10s %12s %10s  %s%n", "QUEUE", "KVS", "NET(A)", "NET(S)",
                "SYNC", "TXN", "EPOCH", "NOTE"));
        for (Row r : rows) {
            sb.append(String.format("%-28s %-10s %-6s %-6s %-10s %12s %10d  %s%n", r.queue, r.node, r.networkA,
                    r.networkS, r.sync, r.txn < 0 ? "-" : String.valueOf(r.txn), r.epoch,
                    r.note));
        }
        return sb.toString();
    }

    /** Rows of the management table for one queue, from its writer's state. */
    static List<Row> rowsOf(QueueReplica q) {
        List<Row> rows = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Member m : q.members) {
            NodeHealth h = q.core.health(m.node);
            NetState a = netState(h, m, NodePath.ACTIVE);
            NetState s = netState(h, m, NodePath.STANDBY);
            rows.add(new Row(q.name, m.node, a, s, m.sync, m.txn, Epochs.counter(q.epoch),
                    m.lost ? "unreachable" : (q.rebuild != null && q.rebuild.target == m ? q.rebuild.progress()
                            : m.damaged ? "DAMAGED" : "")));
            seen.add(m.node);
        }
        for (String n : q.isolated) {
            if (!seen.contains(n)) {
                NodeHealth h = q.core.health(n);
                rows.add(new Row(q.name, n, h.state(NodePath.ACTIVE) == NetState.NG ? NetState.NG : NetState.READY,
                        h.state(NodePath.STANDBY) == NetState.NG ? NetState.NG : NetState.READY, SyncState.NG, -1, Epochs.counter(q.epoch),
                        q.staleCopies.note(n).isEmpty() ? "isolated" : q.staleCopies.note(n)));
            }
        }
        return rows;
    }

    private static NetState netState(NodeHealth h, Member m, NodePath p) {
        if (h.state(p) == NetState.NG) {
            return NetState.NG;
        }
        return m.path == p && !m.lost ? NetState.RUN : NetState.READY;
    }
}
