package org.jameskvs.faults;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Network faults with network namespaces (see {@link NetLab}): each KVS server process runs in
 * its own namespace ({@code ip netns exec kvsfN java ...}) with one address on each of two
 * segments (active path 10.200.1.x, standby path 10.200.2.x, bridges in the root namespace where
 * the writer runs). Needs root; without namespaces every test here is SKIPPED (assumption), never
 * passed.
 *
 * <p>Node-to-node partitions are not a scenario here: KVS nodes never talk to each other in this
 * design; the writer (the mail gateway) writes both copies and copies a queue when it rebuilds one.
 * A partition between two nodes therefore changes nothing.
 *
 * <p>The kernel here may lack {@code sch_netem}; the slow link is then a {@code tbf} rate limit
 * (no added delay) and the lossy link random drops with iptables' {@code statistic} match.
 */
class NetworkFaultsTest {
    @RegisterExtension
    static final NamespacesExtension NAMESPACES = new NamespacesExtension(3);
    private NetLab lab;
    private boolean netem;

    @TempDir
    Path dir;

    @BeforeEach
    void needNamespaces() throws Exception {
        lab = NAMESPACES.lab();
        netem = NAMESPACES.netem();
        lab.clearFaults(); // a previous scenario's faults are gone
    }

    private FaultCluster cluster() throws Exception {
        List<NodeProcess> nodes = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            nodes.add(lab.node("kvs" + i, dir.resolve("kvs" + i), i, 7400));
        }
        return new FaultCluster(dir, nodes).start();
    }

    /** Only the active path of kvs2 is cut: requests must move to the standby path; the copy stays. */
    @Test
    void partitionOfTheActivePath() throws Exception {
        try (FaultCluster c = cluster()) {
            FaultCluster.Outcome o = Scenarios.faultUnderLoad("net-partition-active-path", c, "kvs2",
                    () -> lab.link(2, "a", false), () -> lab.link(2, "a", true), Map.of("cut", "kvs2_segment_a"));
            assertThat(o.syncNodes()).as("the standby path keeps kvs2's copy in sync").contains("kvs2");
        }
    }

    /** Both paths of kvs2 cut (writer <-> node partition, no RST, no FIN), healed 3 s later. */
    @Test
    void partitionBetweenWriterAndNode() throws Exception {
        try (FaultCluster c = cluster()) {
            Scenarios.faultUnderLoad("net-partition-node", c, "kvs2", () -> {
                lab.link(2, "a", false);
                lab.link(2, "b", false);
            }, () -> {
                lab.link(2, "a", true);
                lab.link(2, "b", true);
            }, Map.of("cut", "kvs2_segments_a+b"));
        }
    }

    /** kvs2's links limited to 2 Mbit/s (tbf, both directions; plus 50 ms netem delay if the kernel has it). */
    @Test
    void slowLink() throws Exception {
        try (FaultCluster c = cluster()) {
            Map<String, String> notes = new LinkedHashMap<>();
            notes.put("shape", "tbf_2mbit" + (netem ? "+netem_50ms" : "_(no_netem_in_kernel)"));
            Scenarios.faultUnderLoad("net-slow-link", c, "kvs2", () -> {
                lab.slow(2, "2mbit");
                if (netem) {
                    lab.delay(2, 50);
                }
            }, () -> lab.unshape(2), notes);
        }
    }

    /** 5 % of kvs2's TCP segments dropped at random, both directions. */
    @Test
    void lossyLink() throws Exception {
        try (FaultCluster c = cluster()) {
            Scenarios.faultUnderLoad("net-lossy-link", c, "kvs2", () -> lab.lossy(2, 5), () -> lab.lossless(2),
                    Map.of("loss", "5%_iptables_statistic"));
        }
    }
}
