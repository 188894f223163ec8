package org.jameskvs.replication;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The management table of one queue as an outsider sees it (an admin command, not the writer):
 * built from a {@link ReplicationCore#peekRecord read-only peek}, so nothing is fenced. SYNC states
 * come from the newest replication record (what its writer last wrote), transaction numbers and
 * epochs from each node's own OPEN answer (its wire epoch, shown as the writer's epoch counter as
 * the writer's own table does), path states from this process's heartbeats. One row per
 * node that holds the queue, and one per copy the record names that did not answer.
 */
final class PeekedTable {
    private PeekedTable() {
    }

    static ManagementTable of(String queue, ReplicationCore.Peeked peeked, List<String> group,
                              Function<String, NodeHealth> health) {
        MembershipRecord newest = peeked.record();
        List<ManagementTable.Row> rows = new ArrayList<>();
        List<String> answered = new ArrayList<>();
        for (ReplicationCore.Holder h : peeked.holders()) {
            if (h == null) {
                continue;
            }
            answered.add(h.node());
            MembershipRecord.Entry entry = newest == null ? null : newest.entry(h.node());
            String note;
            if (newest == null) {
                note = ManagementTable.NO_RECORD;
            } else if (entry == null) {
                note = ManagementTable.NOT_A_COPY;
            } else if (h.record() == null || newest.newerThan(h.record())) {
                note = "record behind (" + version(h.record()) + " < " + version(newest) + ")";
            } else {
                note = "record " + version(newest) + ", owner " + newest.owner();
            }
            rows.add(row(queue, h.node(), health.apply(h.node()), entry == null ? SyncState.NG : entry.sync(), h.txn(),
                Epochs.counter(Epochs.fencingOf(h.epoch())), note));
        }
        if (newest != null) {
            for (MembershipRecord.Entry e : newest.members()) {
                if (!answered.contains(e.node())) {
                    rows.add(row(queue, e.node(), health.apply(e.node()), e.sync(), -1, Epochs.counter(newest.epoch()),
                        "copy did not answer"));
                }
            }
        }
        Map<String, NetState[]> nodes = new LinkedHashMap<>();
        for (String n : group) {
            NodeHealth h = health.apply(n);
            nodes.put(n, new NetState[] {h.state(NodePath.ACTIVE), h.state(NodePath.STANDBY)});
        }
        return new ManagementTable(rows, nodes);
    }

    private static ManagementTable.Row row(String queue, String node, NodeHealth h, SyncState sync, long txn, long epoch,
                                           String note) {
        return new ManagementTable.Row(queue, node, h.state(NodePath.ACTIVE), h.state(NodePath.STANDBY), sync, txn, epoch, note);
    }

    private static String version(MembershipRecord r) {
        return r == null ? "none" : "v=" + r.epoch() + "." + r.seq();
    }
}
