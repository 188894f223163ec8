package org.jameskvs.faults;

import org.jameskvs.testkit.ExternalTool;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ChaosSoak} with real full disks: KVS server processes on 127.0.0.1, each with its data
 * directory on a file system of its own ({@link TmpfsDisk}, 2 GiB, RAM only as far as written), and a
 * ballast file written under a running node as the fault, deleted as the heal:
 * <ul>
 *   <li>{@code disk_full}: until the file system refuses the next write (0 bytes left). The store
 *       looks at the free space again at its first write a second or more after its last look (or
 *       when its own count of what it wrote nears the limit), so it may write into the full file
 *       system before it knows; once it knows, not even the record of a refusal fits (STORAGE_ERROR,
 *       the copy isolated);</li>
 *   <li>{@code disk_low}: 40 MiB left, below {@code disk.minFreeBytes} (64 MiB, as shipped) and
 *       above its reserve (half of it): PUTs refused with DISK_FULL, deletes go on;</li>
 * </ul>
 * With three nodes beside kill -9 (restart on the same disk) and SIGSTOP/SIGCONT; with two nodes the
 * disk faults alone. One node at a time. At each heal the node's process must still be running: a
 * full disk is an answer, not a crash. At the end, as in every soak: every acknowledged put on both
 * SYNC copies and read back by a new owner, no acknowledged delete back, none twice. Needs root
 * (mount); without it SKIPPED, never passed; under {@code bin/test} it fails instead.
 */
class FullDiskChaosSoakTest {
    static final int ROUNDS = Integer.getInteger("faults.diskChaosRounds", 8);
    static final int SLOW_ROUNDS = Integer.getInteger("faults.diskChaosSlowRounds", 60);
    static final int TWO_NODE_ROUNDS = Integer.getInteger("faults.diskChaosTwoNodeRounds", 6);
    /** Each node's file system: the journal (about 2 MB/s per copy, files kept five minutes after they end), rebuilds (a whole copy each) and room to spare. */
    private static final long DISK_BYTES = 2L << 30;
    /** {@code disk.minFreeBytes} as shipped (conf/kvs-server.properties). */
    private static final long MIN_FREE_BYTES = 64L << 20;
    /** Below {@code disk.minFreeBytes}, above its reserve (half of it). */
    private static final long LOW_BYTES = 40L << 20;

    @TempDir
    Path dir;

    @Test
    void fullDisksInARowLoseNothingAcknowledged() throws Exception {
        soak("disk-chaos", ROUNDS);
    }

    @Tag("slow")
    @Test
    void manyFullDisksInARowLoseNothingAcknowledged() throws Exception {
        soak("disk-chaos-long", SLOW_ROUNDS);
    }

    /**
     * Two nodes, no third to move a copy to: a disk filled to the last byte cannot even take the
     * record of a refusal, so the copy is isolated and every write refused until the node has room
     * and its copy is rebuilt; a disk below {@code disk.minFreeBytes} keeps its copy (the PUT fails
     * and is undone). Either way nothing acknowledged is lost and writes come back after the heal.
     */
    @Test
    void twoNodesFullDisksInARowLoseNothingAcknowledged() throws Exception {
        soak("disk-chaos-2", 2, TWO_NODE_ROUNDS, false);
    }

    /**
     * The paced soaks write about 2 MB/s, so the store's free-space look (at most a second old) and
     * the page warmer's lead keep its writes off pages with no room behind them. Here the writer runs
     * at full speed (32 puts in flight) when a member's file system fills to the last byte.
     */
    @Test
    void aDiskFilledToTheLastByteUnderAFullSpeedWriterLosesNothingAcknowledged() throws Exception {
        onOwnDisks(3, (c, disks) -> {
            ChaosSoak.Fault full = fill("disk_full", 0, disks);
            NodeProcess victim = c.node("kvs2"); // a member: FaultCluster places the queue on kvs1 and kvs2
            Scenarios.faultUnderLoad("disk-full-fast", c, victim.name, () -> full.inject().on(victim),
                    () -> full.heal().on(victim), Map.of());
        });
    }

    private void soak(String name, int rounds) throws Exception {
        soak(name, 3, rounds, true);
    }

    private void soak(String name, int nodes, int rounds, boolean processFaults) throws Exception {
        onOwnDisks(nodes, (c, disks) -> {
            List<ChaosSoak.Fault> faults = new ArrayList<>(List.of(
                    fill("disk_full", 0, disks),
                    fill("disk_low", LOW_BYTES, disks)));
            if (processFaults) {
                faults.add(ChaosSoak.processFault("kill"));
                faults.add(ChaosSoak.processFault("pause"));
            }
            ChaosSoak.run(name, c, faults, rounds);
        });
    }

    /** What runs on the started cluster, with each node's disk. */
    private interface OnDisks {
        void run(FaultCluster cluster, Map<NodeProcess, TmpfsDisk> disks) throws Exception;
    }

    /**
     * {@code nodes} nodes with the shipped {@code disk.minFreeBytes} (the test harness turns it off by
     * default), each on a tmpfs of its own, started; stopped and unmounted afterwards. Skipped where no
     * tmpfs can be mounted (failing under {@code bin/test}).
     */
    private void onOwnDisks(int nodes, OnDisks body) throws Exception {
        String unavailable = TmpfsDisk.unavailableReason();
        ExternalTool.assumeAvailable(unavailable == null, "a tmpfs of its own per node: " + unavailable);
        List<String> minFree = List.of("disk.minFreeBytes=" + MIN_FREE_BYTES);
        FaultCluster cluster = FaultCluster.local(dir, nodes, Map.of("kvs1", minFree, "kvs2", minFree, "kvs3", minFree));
        Map<NodeProcess, TmpfsDisk> disks = new LinkedHashMap<>();
        try {
            for (NodeProcess n : cluster.nodes) {
                disks.put(n, TmpfsDisk.mount(n.dataDir, DISK_BYTES));
            }
            try (FaultCluster c = cluster.start()) {
                body.run(c, disks);
            }
        } finally {
            cluster.close();
            for (TmpfsDisk d : disks.values()) {
                d.close();
            }
        }
    }

    /**
     * Ballast until {@code leave} bytes are left; the heal deletes it, prints what the node logged
     * meanwhile (its warnings and errors, the first few) and finds it still running.
     */
    private static ChaosSoak.Fault fill(String name, long leave, Map<NodeProcess, TmpfsDisk> disks) {
        Map<NodeProcess, Integer> logAtFill = new ConcurrentHashMap<>();
        return new ChaosSoak.Fault(name, false, n -> {
            logAtFill.put(n, n.log().length());
            long left = disks.get(n).fill(leave);
            System.out.println("[" + name + "] " + n.name + ": " + left + " bytes left on " + disks.get(n));
        }, n -> {
            disks.get(n).free();
            String log = n.log();
            List<String> said = log.substring(Math.min(logAtFill.getOrDefault(n, 0), log.length())).lines()
                    .filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).toList();
            System.out.println("[" + name + "] " + n.name + " logged " + said.size() + " warnings/errors meanwhile"
                    + said.stream().limit(4).map(l -> "\n    " + (l.length() > 300 ? l.substring(0, 300) : l))
                    .collect(Collectors.joining()));
            assertThat(n.alive()).as("%s still running after %s (a full disk is an answer, not a crash); its log:\n%s",
                    n.name, name, tail(log)).isTrue();
        });
    }

    private static String tail(String log) {
        return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    }
}
