package org.jameskvs.replication;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The small pure parts: record codec, lease, placement, configuration, epochs. */
class ReplicationPartsTest {

    @Test
    void recordRoundTrips() {
        MembershipRecord r = new MembershipRecord(7, 3, "james-1", 12, 2, List.of(
                new MembershipRecord.Entry("kvs1", SyncState.SYNC, 100),
                new MembershipRecord.Entry("kvs3", SyncState.REBUILDING, -1)));
        MembershipRecord back = MembershipRecord.decode(r.encode());
        assertThat(back).isEqualTo(r);
        assertThat(back.newerThan(new MembershipRecord(7, 2, "x", 0, -1, List.of()))).isTrue();
        assertThat(back.newerThan(new MembershipRecord(8, 0, "x", 0, -1, List.of()))).isFalse();
        assertThat(MembershipRecord.decode("garbage".getBytes())).isNull();
        MembershipRecord born = new MembershipRecord(7, 3, "james-1", 12, 2, r.members(), 0x5eed_cafeL);
        assertThat(MembershipRecord.decode(born.encode())).isEqualTo(born);
        // A record written before incarnations existed decodes with none (0).
        assertThat(MembershipRecord.decode("v=7.3;o=a;l=0;r=-1;m=kvs1:SYNC:5:-1".getBytes()).incarnation()).isZero();
    }

    @Test
    void recordWitnessesRoundTripAndNameEachNodesStore() {
        java.util.TreeMap<String, Long> stores = new java.util.TreeMap<>(java.util.Map.of(
                "kvs1", 0x8823bf4b8e476e3L, "kvs2", -2L, "kvs3", 1L));
        MembershipRecord r = new MembershipRecord(7, 3, "james-1", 12, 2, List.of(
                new MembershipRecord.Entry("kvs1", SyncState.SYNC, 100, 5)), 0x5eedL, stores);
        MembershipRecord back = MembershipRecord.decode(r.encode());
        assertThat(back).isEqualTo(r);
        assertThat(back.witnesses()).containsExactlyEntriesOf(stores);
        assertThat(back.witnessed("kvs1", 0x8823bf4b8e476e3L)).isTrue();
        assertThat(back.witnessed("kvs2", -2L)).as("an id with the top bit set").isTrue();
        assertThat(back.witnessed("kvs1", 0x1234L)).as("another store: the node lost its disk since").isFalse();
        assertThat(back.witnessed("kvs4", 1L)).as("a node the writer never heard").isFalse();
        assertThat(back.witnessed("kvs3", 0)).as("a server that sends no store id").isFalse();
        // Records written before store ids existed name no witnesses (and prove nothing about disks).
        MembershipRecord old = MembershipRecord.decode("v=7.3;o=a;l=0;r=-1;i=9;m=kvs1:SYNC:5:-1".getBytes());
        assertThat(old.witnesses()).isEmpty();
        assertThat(old.witnessed("kvs1", 1L)).isFalse();
    }

    @Test
    void leaseExpiresOnlyWhenTheRecordStopsChanging() {
        LeaseWatcher w = new LeaseWatcher(Duration.ofSeconds(10));
        long s = 1_000_000_000L;
        MembershipRecord v1 = new MembershipRecord(1, 1, "a", 0, -1, List.of());
        MembershipRecord v2 = new MembershipRecord(1, 2, "a", 1, -1, List.of());
        assertThat(w.expired(0, v1)).isFalse();
        assertThat(w.expired(9 * s, v1)).isFalse();
        assertThat(w.expired(9 * s + 1, v2)).isFalse(); // renewed
        assertThat(w.expired(18 * s, v2)).isFalse();
        assertThat(w.expired(19 * s + 2, v2)).isTrue();
        assertThat(new LeaseWatcher(Duration.ofSeconds(1)).expired(0, null)).isTrue();
    }

    @Test
    void placementIsDeterministicAndReplacementIsTheNextHealthyNode() {
        ReplicationConfig c = config();
        Placement p = new Placement(c);
        List<String> pair = p.pair("mail.example.com");
        assertThat(new Placement(c).pair("mail.example.com")).isEqualTo(pair);
        assertThat(pair).hasSize(2).doesNotHaveDuplicates();
        String next = p.replacement("mail.example.com", pair, n -> true);
        assertThat(next).isNotNull().isNotIn(pair);
        assertThat(p.replacement("mail.example.com", pair, n -> false)).isNull();
        ReplicationConfig pinned = c.withPlacement(ReplicationConfig.PlacementRule.FIRST_TWO, java.util.Map.of("q", List.of("c", "a")));
        assertThat(new Placement(pinned).pair("q")).containsExactly("c", "a");
        assertThat(new Placement(pinned).pair("other")).containsExactly("a", "b");
        // A new queue goes to the first two of these that answer: the pair first, even when explicit.
        assertThat(new Placement(pinned).orderFrom("q")).containsExactly("c", "a", "b");
        assertThat(new Placement(pinned).orderFrom("other")).containsExactly("a", "b", "c");
    }

    @Test
    void configurationFromProperties() {
        Properties p = new Properties();
        p.setProperty("replication.nodes", "kvs1, kvs2,kvs3");
        p.setProperty("replication.node.kvs1.active", "10.0.1.1:7401");
        p.setProperty("replication.node.kvs1.standby", "10.0.2.1:7401");
        p.setProperty("replication.node.kvs2.active", "10.0.1.2:7401");
        p.setProperty("replication.node.kvs3.active", "10.0.1.3:7402");
        p.setProperty("replication.user", "james");
        p.setProperty("replication.placement.spool", "kvs3,kvs1");
        p.setProperty("replication.copyBlockMessages", "250");
        ReplicationConfig c = ReplicationConfig.fromProperties(p);
        assertThat(c.nodeNames()).containsExactly("kvs1", "kvs2", "kvs3");
        assertThat(c.node("kvs1").host(NodePath.STANDBY)).isEqualTo("10.0.2.1");
        assertThat(c.node("kvs2").standbyHost()).isEqualTo("10.0.1.2");
        assertThat(c.node("kvs3").port(NodePath.ACTIVE)).isEqualTo(7402);
        assertThat(c.heartbeatInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(c.heartbeatTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.copyBlockMessages()).isEqualTo(250);
        assertThat(c.placementOverrides()).containsEntry("spool", List.of("kvs3", "kvs1"));
    }

    @Test
    void epochsOrderByCounterThenProcessThenGeneration() {
        long a = Epochs.fencing(5, 7), b = Epochs.fencing(5, 9), c = Epochs.fencing(6, 1);
        assertThat(a).isLessThan(b);
        assertThat(b).isLessThan(c);
        assertThat(Epochs.wire(a, (1 << 20) - 1)).isLessThan(Epochs.wire(b, 1));
        assertThat(Epochs.counter(Epochs.fencingOf(Epochs.wire(c, 3)))).isEqualTo(6);
    }

    private static ReplicationConfig config() {
        return ReplicationConfig.of(List.of(
                new ReplicationConfig.NodeSpec("a", "h", 1, "h", 1),
                new ReplicationConfig.NodeSpec("b", "h", 2, "h", 2),
                new ReplicationConfig.NodeSpec("c", "h", 3, "h", 3)), "u", "p");
    }
}
