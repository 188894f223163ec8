package org.jameskvs.replication;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which copy a read-only reader reads ({@link ReadOnlyReplica#choose}): pure, no network. */
class ReadOnlyReplicaChoiceTest {
    private static MembershipRecord rec(long seq, MembershipRecord.Entry... members) {
        return new MembershipRecord(7, seq, "james-a", 0, -1, List.of(members));
    }

    private static MembershipRecord.Entry sync(String node) {
        return new MembershipRecord.Entry(node, SyncState.SYNC, -1);
    }

    private static ReplicationCore.Holder holder(String node, MembershipRecord record, long size) {
        return new ReplicationCore.Holder(node, NodePath.ACTIVE, record, 10, 0, size);
    }

    private static String choose(ReplicationCore.Peeked p, String current, String avoid) {
        ReplicationCore.Holder h = ReadOnlyReplica.choose(p, current, avoid, 3);
        return h == null ? null : h.node();
    }

    @Test
    void theFencedEmptyQueueOnANonMemberIsNeverChosen() {
        MembershipRecord r = rec(3, sync("kvs2"), sync("kvs3"));
        ReplicationCore.Peeked p = new ReplicationCore.Peeked(r, 3,
                List.of(holder("kvs1", null, 0), holder("kvs2", r, 8), holder("kvs3", r, 8)));
        assertThat(choose(p, null, null)).isEqualTo("kvs2");
        assertThat(choose(p, "kvs3", null)).as("the current copy is kept").isEqualTo("kvs3");
        assertThat(choose(p, "kvs2", "kvs2")).as("a failed copy only as a last resort").isEqualTo("kvs3");
    }

    @Test
    void aStaleFormerCopyAndACopyWithoutRecordAreNotChosen() {
        MembershipRecord old = rec(3, sync("kvs2"), sync("kvs3"));
        MembershipRecord now = rec(5, sync("kvs3"), new MembershipRecord.Entry("kvs1", SyncState.REBUILDING, -1));
        ReplicationCore.Peeked p = new ReplicationCore.Peeked(now, 3,
                List.of(holder("kvs1", now, 2), holder("kvs2", old, 8), holder("kvs3", now, 9)));
        assertThat(choose(p, "kvs2", null)).isEqualTo("kvs3");
        // A member named SYNC that holds no record lost its data: not a source.
        MembershipRecord both = rec(6, sync("kvs2"), sync("kvs3"));
        ReplicationCore.Peeked lost = new ReplicationCore.Peeked(both, 2,
                List.of(holder("kvs2", null, 0), holder("kvs3", both, 9)));
        assertThat(choose(lost, null, null)).isEqualTo("kvs3");
        ReplicationCore.Peeked none = new ReplicationCore.Peeked(both, 2, List.of(holder("kvs2", null, 0)));
        assertThat(choose(none, null, null)).isNull();
    }

    @Test
    void tooFewAnswersTellNothing() {
        MembershipRecord r = rec(3, sync("kvs2"), sync("kvs3"));
        assertThat(choose(new ReplicationCore.Peeked(r, 1, List.of(holder("kvs2", r, 8))), null, null)).isNull();
        // Without any record, only every node answering can tell which copy is the queue: the largest.
        List<ReplicationCore.Holder> plain = List.of(holder("kvs1", null, 0), holder("kvs2", null, 4));
        assertThat(choose(new ReplicationCore.Peeked(null, 2, plain), null, null)).isNull();
        assertThat(choose(new ReplicationCore.Peeked(null, 3, plain), null, null)).isEqualTo("kvs2");
    }

    @Test
    void aDamagedCopyIsReadOnlyWhenNoIntactOneQualifies() {
        MembershipRecord r = rec(3, sync("kvs2"), sync("kvs3"));
        ReplicationCore.Holder damaged = new ReplicationCore.Holder("kvs2", NodePath.ACTIVE, r, 10, 0, 8, true);
        ReplicationCore.Peeked p = new ReplicationCore.Peeked(r, 3, List.of(damaged, holder("kvs3", r, 8)));
        assertThat(choose(p, null, null)).isEqualTo("kvs3");
        assertThat(choose(p, "kvs2", null)).as("not even as the current copy").isEqualTo("kvs3");
        assertThat(choose(p, null, "kvs3")).as("an intact copy that just failed still comes first").isEqualTo("kvs3");
        assertThat(choose(new ReplicationCore.Peeked(r, 2, List.of(damaged)), null, null)).as("the only one")
                .isEqualTo("kvs2");
        // Without any record: the largest intact copy, not a larger damaged one.
        List<ReplicationCore.Holder> plain = List.of(new ReplicationCore.Holder("kvs1", NodePath.ACTIVE, null, 10, 0, 9, true),
                holder("kvs2", null, 4), holder("kvs3", null, 0));
        assertThat(choose(new ReplicationCore.Peeked(null, 3, plain), null, null)).isEqualTo("kvs2");
    }
}
