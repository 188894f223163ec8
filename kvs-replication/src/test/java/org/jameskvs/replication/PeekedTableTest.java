package org.jameskvs.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@code kvs-admin table} and the COPIES column of {@code kvs-admin list} read a queue's management
 * table from a read-only peek: sync states from the newest record, txn and epoch from each node's
 * answer, and notes that tell copies from nodes that only hold the queue.
 */
class PeekedTableTest {
    private static final List<String> GROUP = List.of("kvs1", "kvs2", "kvs3");
    /** The record carries the writer's fencing epoch; each node answers with its wire epoch (generations differ). */
    private static final long EPOCH = Epochs.fencing(7, 3);

    private final Map<String, NodeHealth> health = Map.of("kvs1", new NodeHealth("kvs1", 0), "kvs2",
        new NodeHealth("kvs2", 0), "kvs3", new NodeHealth("kvs3", 0));

    @Test
    void copiesComeFromTheNewestRecordAndOtherHoldersAreNoCopies() {
        MembershipRecord newest = record(5, SyncState.SYNC, SyncState.REBUILDING);
        MembershipRecord older = record(4, SyncState.SYNC, SyncState.SYNC);
        health.get("kvs2").set(NodePath.ACTIVE, NetState.NG);
        ReplicationCore.Peeked peeked = new ReplicationCore.Peeked(newest, 3, Arrays.asList(
            new ReplicationCore.Holder("kvs1", NodePath.ACTIVE, newest, 120, Epochs.wire(EPOCH, 1), 51),
            new ReplicationCore.Holder("kvs2", NodePath.STANDBY, older, 118, Epochs.wire(EPOCH, 2), 51),
            new ReplicationCore.Holder("kvs3", NodePath.ACTIVE, null, 1, Epochs.wire(EPOCH, 3), 0)));

        List<ManagementTable.Row> rows = PeekedTable.of("q", peeked, GROUP, health::get).rows();

        assertThat(rows).extracting(ManagementTable.Row::node).containsExactly("kvs1", "kvs2", "kvs3");
        assertThat(rows).extracting(ManagementTable.Row::sync).containsExactly(SyncState.SYNC, SyncState.REBUILDING, SyncState.NG);
        assertThat(rows).extracting(ManagementTable.Row::txn).containsExactly(120L, 118L, 1L);
        assertThat(rows).extracting(ManagementTable.Row::epoch).containsOnly(7L);
        assertThat(rows).extracting(ManagementTable.Row::copy).containsExactly(true, true, false);
        assertThat(rows.get(0).note()).isEqualTo("record v=" + EPOCH + ".5, owner james-a");
        assertThat(rows.get(1).note()).startsWith("record behind (v=" + EPOCH + ".4 <");
        assertThat(rows.get(1).networkA()).isEqualTo(NetState.NG);
        assertThat(rows.get(2).note()).isEqualTo(ManagementTable.NOT_A_COPY);
    }

    @Test
    void aCopyThatDidNotAnswerIsShownWithoutTxn() {
        MembershipRecord newest = record(2, SyncState.SYNC, SyncState.SYNC);
        ReplicationCore.Peeked peeked = new ReplicationCore.Peeked(newest, 1, Arrays.asList(
            new ReplicationCore.Holder("kvs1", NodePath.ACTIVE, newest, 9, Epochs.wire(EPOCH, 1), 3), null, null));

        List<ManagementTable.Row> rows = PeekedTable.of("q", peeked, GROUP, health::get).rows();

        assertThat(rows).extracting(ManagementTable.Row::node).containsExactly("kvs1", "kvs2");
        assertThat(rows.get(1).txn()).isEqualTo(-1);
        assertThat(rows).extracting(ManagementTable.Row::epoch).containsOnly(7L);
        assertThat(rows.get(1).note()).isEqualTo("copy did not answer");
        assertThat(rows.get(1).copy()).isTrue();
    }

    @Test
    void withoutARecordNoNodeIsACopy() {
        ReplicationCore.Peeked peeked = new ReplicationCore.Peeked(null, 3, Arrays.asList(
            new ReplicationCore.Holder("kvs1", NodePath.ACTIVE, null, 4, 0, 2), null, null));

        List<ManagementTable.Row> rows = PeekedTable.of("q", peeked, GROUP, health::get).rows();

        assertThat(rows).singleElement().satisfies(r -> {
            assertThat(r.note()).isEqualTo(ManagementTable.NO_RECORD);
            assertThat(r.copy()).isFalse();
        });
        assertThat(PeekedTable.of("q", new ReplicationCore.Peeked(null, 3), GROUP, health::get).rows()).isEmpty();
    }

    private static MembershipRecord record(long seq, SyncState kvs1, SyncState kvs2) {
        return new MembershipRecord(EPOCH, seq, "james-a", seq, -1, List.of(new MembershipRecord.Entry("kvs1", kvs1, 0),
            new MembershipRecord.Entry("kvs2", kvs2, 0)));
    }
}
