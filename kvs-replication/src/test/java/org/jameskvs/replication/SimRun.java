package org.jameskvs.replication;

import org.jameskvs.client.Ack;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

/**
 * One seed of the simulation: two James writers (each a {@link ReplicationCore}) and three KVS
 * nodes, a random workload (put, delete, replace) with random faults, one or two at a time (a path
 * cut, a node cut, a client-node cut, answers held on one path, a pause, a crash with its disk, a
 * crash without it when that is a single failure, broken connections, duplicated frames), owner
 * restarts and takeovers; then everything heals and {@link SimHistory} checks what is on the copies.
 * Everything is drawn from the seed: the same seed gives the same run, event for event.
 */
final class SimRun {
    private static final long MS = SimCluster.MS;
    /**
     * The faults drawn; with store-full faults ({@code storeFull}, {@code -Dsim.diskFull=true} for
     * {@code manySeeds}, always in {@code storeFullSeeds}) one more: a node's store full (restarted
     * with its journal limit at what it holds: PUTs refused with DISK_FULL, deletes into the reserve)
     * until it restarts with room. Without it the seeds' runs stay as they were (the digests of
     * -Dsim.digests).
     */
    private static final String[] FAULTS = {"cut path", "cut node", "cut client-node", "pause", "crash",
            "crash (data loss if safe)", "break connections", "hold answers of a path"};
    private static final String[] FAULTS_WITH_STORE_FULL = {"cut path", "cut node", "cut client-node", "pause", "crash",
            "crash (data loss if safe)", "break connections", "hold answers of a path", "store full"};
    private final String[] faultKinds;
    /** Nodes whose store is full (the "store full" fault) until it ends or the run heals. */
    private final java.util.Set<String> storeFull = new java.util.TreeSet<>();

    record Result(long seed, int ops, long acks, int takeovers, int faults, long duplicates, List<String> events,
                  List<String> trace, List<String> violations) {
    }

    final long seed;
    /** The queue of this seed: its own name, so nodes reused across seeds never mix two seeds' queues. */
    private final String Q;
    private final int opCount;
    final SimCluster c;
    private final Random rnd;
    final SimHistory history;
    private int faults;
    private int takeovers;
    private long issueSeq;
    private int leader;
    private int activeFaults;
    private boolean dataLossUnrepaired;
    /**
     * Faults other than a second data loss also while a node that lost its data is not refilled
     * (its partner down, cut, paused...): the writer must then wait for the partner, never take the
     * emptied node's word (see {@code OpenProcedure#newestRecordSurely}, {@code MemberPaths#lostDisk}).
     */
    static final boolean FAULTS_WHILE_WIPED = Boolean.parseBoolean(System.getProperty("sim.faultsWhileWiped", "true"));
    /**
     * Two-node seeds: the node crashed (with its data) while the queue was fully replicated, until it
     * restarts. Its copy holds every acknowledged mutation while it is down (no second copy to
     * acknowledge with), so the other node may lose its disk meanwhile, also after takeovers that
     * fenced it alone (their epochs go with its disk: {@code Epochs#LOST_DISK_MARGIN}; and the down
     * node, unseen by their opens, may hold the only whole copy: {@code RecordAndRebuild#sourceChecked}).
     */
    private String downSynced;
    /** The newest writer epoch when {@link #downSynced} went down: a takeover since fenced the other node only. */
    private long downSyncedEpoch;
    /**
     * The node wiped while {@link #downSynced} was down and after a takeover that fenced it alone.
     * Either node may come back first: the wiped one first, the next open hears it answer from a new
     * store and fences past the lost epochs ({@code Epochs#LOST_DISK_MARGIN}); the one that was down
     * first, an open that hears only it cannot know the lost epochs and takes a lower one, while the
     * writer of the lost epoch, whose only copy went with the disk, can acknowledge nothing more
     * ({@link SimHistory#checkOneWriter}).
     */
    private String wipedAfterTakeover;
    /** The node whose data a crash took, until its copy is rebuilt (see {@link #repaired}). */
    private String wipedNode;
    private boolean healed;

    SimRun(long seed, int opCount, Function<String, SimNode> nodes, boolean verbose, boolean trace) {
        this(seed, opCount, nodes, verbose, trace, false);
    }

    SimRun(long seed, int opCount, Function<String, SimNode> nodes, boolean verbose, boolean trace, boolean storeFullFaults) {
        this.faultKinds = storeFullFaults ? FAULTS_WITH_STORE_FULL : FAULTS;
        this.seed = seed;
        this.Q = queueOf(seed);
        this.history = new SimHistory(Q);
        this.opCount = opCount;
        this.c = new SimCluster(seed, nodesOf(seed), 2, nodes);
        this.c.verbose = verbose;
        if (trace) {
            c.world.trace = new ArrayList<>();
        }
        c.world.duplicateProbability = 0.01;
        this.rnd = new Random(seed * 7919 + 13);
    }

    /**
     * Every fourth seed runs on two nodes: a copy whose node is lost then has no third node to be
     * rebuilt on, so it comes back and is caught up by its suffix or rebuilt in full (see CatchUp);
     * the others on three, where a lost copy is replaced at once.
     */
    static int nodesOf(long seed) {
        return seed % 4 == 0 ? 2 : 3;
    }

    static String queueOf(long seed) {
        return "seed-" + seed + ".example.net";
    }

    /** Runs the seed; at the end the nodes are released (their connections closed). Violations are returned, not thrown. */
    Result execute() {
        try {
            c.run(50);
            SimCluster.Writer first = c.writers.get(0);
            for (int attempt = 0; attempt < 20 && !first.ready(); attempt++) {
                openAndTrack(0, false);
                c.run(300);
            }
            if (!first.ready()) {
                throw new AssertionError("initial open failed");
            }
            int done = 0;
            while (done < opCount) {
                c.run(5 + rnd.nextInt(40));
                maybeFault();
                maybeTakeover();
                for (int wi = 0; wi < c.writers.size(); wi++) {
                    SimCluster.Writer w = c.writers.get(wi);
                    if (w.replica != null && (wi == leader || rnd.nextInt(4) == 0) && done < opCount) {
                        issue(w);
                        done++;
                    }
                }
            }
            heal();
            for (String e : history.checkOneWriter(c.writers.stream().map(w -> w.owner).toList())) {
                note("one writer: acks at epoch " + e + ", a takeover that acknowledged nothing at its epoch");
            }
            check();
        } catch (Throwable t) {
            history.violations.add("exception: " + t + " at " + (t.getStackTrace().length > 0 ? t.getStackTrace()[0] : "?"));
            if (c.verbose) {
                t.printStackTrace(System.out);
            }
        } finally {
            c.world.dispose();
        }
        return new Result(seed, history.issued.size(), history.acks(), takeovers, faults, c.world.duplicates, c.log,
                c.world.trace, history.violations);
    }

    private void openAndTrack(int wi, boolean force) {
        SimCluster.Writer w = c.writers.get(wi);
        if (w.opening) {
            return;
        }
        w.open(Q, force).thenAccept(r -> {
            if (r.isOk()) {
                history.opensDone.add(new long[]{wi, w.replica.epoch(), c.world.now});
            }
        });
    }

    private void issue(SimCluster.Writer w) {
        QueueReplica q = w.replica;
        List<String> live = history.live();
        int dice = rnd.nextInt(100);
        SimHistory.Issued op;
        if (dice < 55 || live.isEmpty()) {
            String id = w.owner + "-" + (issueSeq + 1);
            op = new SimHistory.Issued(w.owner, NodeOp.PUT, id, "s0", q.epoch(), ++issueSeq, c.world.now);
            history.track(op);
            w.core.put(q, id.getBytes(StandardCharsets.UTF_8), 0, 0, "s0".getBytes(), ("body of " + id).getBytes())
                    .thenAccept(a -> completed(op, a, w, q));
        } else if (dice < 80) {
            String id = live.get(rnd.nextInt(live.size()));
            op = new SimHistory.Issued(w.owner, NodeOp.DELETE, id, null, q.epoch(), ++issueSeq, c.world.now);
            history.track(op);
            w.core.delete(q, id.getBytes(StandardCharsets.UTF_8)).thenAccept(a -> completed(op, a, w, q));
        } else {
            String id = live.get(rnd.nextInt(live.size()));
            String st = "s" + (issueSeq + 1);
            op = new SimHistory.Issued(w.owner, NodeOp.REPLACE, id, st, q.epoch(), ++issueSeq, c.world.now);
            history.track(op);
            w.core.replace(q, id.getBytes(StandardCharsets.UTF_8), 1, 0, st.getBytes()).thenAccept(a -> completed(op, a, w, q));
        }
    }

    private void completed(SimHistory.Issued op, Ack a, SimCluster.Writer w, QueueReplica via) {
        op.outcome = a;
        if (a.isOk()) {
            history.acked(op, c, via);
        }
    }

    private void maybeFault() {
        if (dataLossUnrepaired && repaired()) {
            dataLossUnrepaired = false;
            wipedNode = null;
        }
        // With two copies one failure at a time is survivable. A node that lost its data is a
        // failure until its copy is rebuilt: no other fault may hit the survivor meanwhile.
        if (rnd.nextInt(100) >= 4 || activeFaults >= 2 || dataLossUnrepaired && !FAULTS_WHILE_WIPED) {
            return;
        }
        List<String> nodes = new ArrayList<>(c.world.servers.keySet());
        String drawn = nodes.get(rnd.nextInt(nodes.size()));
        if (c.world.crashed.get(drawn) || c.world.paused.get(drawn)) {
            return;
        }
        long dur = 300 + rnd.nextInt(4000);
        int kind = rnd.nextInt(faultKinds.length);
        if (kind == 8) {
            // A store fills where the queue is: a node holding one of the newest owner's copies.
            QueueReplica newest = newestReplica();
            List<String> copies = newest == null ? List.of() : newest.syncNodes();
            drawn = copies.isEmpty() ? drawn : copies.get(rnd.nextInt(copies.size()));
            if (c.world.crashed.get(drawn) || c.world.paused.get(drawn)) {
                return;
            }
        }
        String n = drawn;
        note("FAULT " + faultKinds[kind] + " " + n + " for " + dur + " ms" + (dataLossUnrepaired ? " (while " + wipedNode
                + " that lost its data is not refilled)" : ""));
        faults++;
        activeFaults++;
        switch (kind) {
            case 0 -> {
                NodePath p = NodePath.values()[rnd.nextInt(2)];
                c.world.cut(n, p, true);
                endAfter(dur, () -> c.world.cut(n, p, false));
            }
            case 1 -> {
                c.world.cut(n, null, true);
                endAfter(dur, () -> c.world.cut(n, null, false));
            }
            case 2 -> {
                String client = c.writers.get(rnd.nextInt(c.writers.size())).client;
                c.world.cutClient(client, n, null, true);
                endAfter(dur, () -> c.world.cutClient(client, n, null, false));
            }
            case 3 -> {
                c.world.pause(n);
                endAfter(dur, () -> c.world.resume(n));
            }
            case 4 -> {
                if (FAULTS_WHILE_WIPED && activeFaults == 1 && c.world.servers.size() == 2 && fullySynced()) {
                    downSynced = n;
                    downSyncedEpoch = newestEpoch();
                }
                c.world.crash(n);
                endAfter(dur, () -> {
                    c.world.restart(n, true);
                    if (n.equals(downSynced)) {
                        if (wipedAfterTakeover != null && c.world.crashed.get(wipedAfterTakeover)) {
                            note(n + ", down since before a takeover, is back while " + wipedAfterTakeover
                                    + ", which lost its disk after that takeover, is still down");
                        }
                        downSynced = null;
                        wipedAfterTakeover = null;
                    }
                });
            }
            case 5 -> {
                // Losing a node's data is only survivable when the queue is fully replicated and
                // nothing else is wrong (single failure); otherwise fall back to a crash with data.
                // Or, on two nodes, while the other node is down with a whole copy: nothing could be
                // acknowledged since (no second copy), so the down node holds every acknowledged
                // mutation, and the writer must wait for it instead of using the emptied copy.
                boolean partnerDownWhole = downSynced != null && !downSynced.equals(n) && activeFaults == 2
                        && !dataLossUnrepaired;
                boolean safe = activeFaults == 1 && fullySynced() && !dataLossUnrepaired || partnerDownWhole;
                if (partnerDownWhole) {
                    boolean afterTakeover = newestEpoch() != downSyncedEpoch;
                    if (afterTakeover) {
                        wipedAfterTakeover = n;
                        history.lostEpochs.add(new long[]{downSyncedEpoch, c.world.now});
                    }
                    note("the only copy's node " + n + " loses its disk while " + downSynced + " is down"
                            + (afterTakeover ? ", after a takeover that fenced it alone" : ""));
                }
                c.world.crash(n);
                if (safe) {
                    dataLossUnrepaired = true;
                    wipedNode = n;
                }
                endAfter(dur, () -> c.world.restart(n, !safe));
            }
            case 6 -> {
                activeFaults--;
                for (SimCluster.Writer w : c.writers) {
                    for (NodePath p : NodePath.values()) {
                        c.world.breakConnection(c.world.link(w.client, n, p));
                    }
                }
            }
            case 8 -> {
                c.world.crash(n);
                c.world.restartStoreFull(n, true);
                storeFull.add(n);
                endAfter(dur, () -> {
                    if (storeFull.remove(n) && !c.world.crashed.get(n)) {
                        c.world.crash(n);
                        c.world.restartStoreFull(n, false); // room again
                    }
                });
            }
            default -> {
                NodePath p = NodePath.values()[rnd.nextInt(2)];
                c.world.holdAnswers(n, p, true);
                endAfter(dur, () -> c.world.holdAnswers(n, p, false));
            }
        }
    }

    /**
     * Ends the fault after {@code dur} ms, unless the run has healed meanwhile: healing ended every
     * fault already, and a late end could strike again (a restart without data of a node healing
     * brought back with its data would be a second failure the run never judged safe).
     */
    private void endAfter(long dur, Runnable end) {
        c.world.after(dur * MS, () -> {
            if (!healed) {
                end.run();
                activeFaults--;
            }
        });
    }

    private void note(String what) {
        String line = String.format("%8.3f ### %s", c.world.now / 1e9, what);
        c.log.add(line);
        if (c.verbose) {
            System.out.println(line);
        }
    }

    /**
     * The newest owner (over every process ever started, zombies included) holds two SYNC copies
     * and nobody is opening: losing one node's data is then a single failure.
     */
    /**
     * The node that lost its data holds a whole copy again: the writer counts it in sync AND its server
     * really holds what the other in-sync copy holds (same seq and digest). The writer's view alone is
     * not enough: right after the crash it has not noticed yet and still counts the wiped copy in sync,
     * and a second fault then would hit the only copy left (seed 7865 of the 100,000-seed run: a node
     * cut 60 ms after its partner lost its disk, both holding the newest membership record).
     */
    private boolean repaired() {
        if (!fullySynced() || c.world.crashed.get(wipedNode)) {
            return false;
        }
        QueueReplica newest = newestReplica();
        List<String> sync = newest.syncNodes();
        if (!sync.contains(wipedNode)) {
            return false;
        }
        String other = sync.get(0).equals(wipedNode) ? sync.get(1) : sync.get(0);
        SimNode.QueueView wiped = c.world.servers.get(wipedNode).view(Q);
        SimNode.QueueView kept = c.world.servers.get(other).view(Q);
        return wiped != null && kept != null && wiped.seq() == kept.seq() && wiped.digest() == kept.digest();
    }

    private long newestEpoch() {
        QueueReplica q = newestReplica();
        return q == null ? -1 : q.epoch();
    }

    private QueueReplica newestReplica() {
        QueueReplica newest = null;
        for (ReplicationCore core : c.allCores) {
            QueueReplica q = core.replica(Q);
            if (q != null && (newest == null || q.epoch() > newest.epoch())) {
                newest = q;
            }
        }
        return newest;
    }

    private boolean fullySynced() {
        QueueReplica newest = null;
        for (ReplicationCore core : c.allCores) {
            QueueReplica q = core.replica(Q);
            if (q == null) {
                continue;
            }
            if (q.phase == QueueReplica.Phase.OPENING) {
                return false;
            }
            if (newest == null || q.epoch() > newest.epoch()) {
                newest = q; // whatever its phase: a fenced or failed newest owner means "not synced"
            }
        }
        if (newest == null || newest.phase != QueueReplica.Phase.READY || c.writers.stream().anyMatch(w -> w.opening)) {
            return false;
        }
        return newest.syncNodes().size() == 2 && !newest.isRebuilding()
                && newest.members.stream().noneMatch(m -> m.lost || !m.open);
    }

    private void maybeTakeover() {
        int dice = rnd.nextInt(1000);
        if (dice < 8) {
            // the other writer takes over (admin call or lease expiry)
            leader = 1 - leader;
            takeovers++;
            note("TAKEOVER by writer " + leader);
            openAndTrack(leader, true);
        } else if (dice < 11) {
            // the leader's James process restarts and reclaims its queue (same owner, epoch+1)
            c.writers.get(leader).boot();
            takeovers++;
            note("RESTART of writer " + leader);
            openAndTrack(leader, false);
        } else if (!c.writers.get(leader).ready() && !c.writers.get(leader).opening && dice < 200) {
            openAndTrack(leader, true);
        }
    }

    private void heal() {
        healed = true;
        for (String n : c.world.servers.keySet()) {
            c.world.cut(n, null, false);
            for (NodePath p : NodePath.values()) {
                c.world.holdAnswers(n, p, false);
            }
            if (c.world.paused.get(n)) {
                c.world.resume(n);
            }
            if (c.world.crashed.get(n)) {
                c.world.restart(n, true);
            }
            if (storeFull.remove(n)) {
                c.world.crash(n);
                c.world.restartStoreFull(n, false); // room again
            }
        }
        c.world.breakProbability = 0;
        c.world.duplicateProbability = 0;
        activeFaults = 99; // no more faults
        c.run(3000);
        SimCluster.Writer w = c.writers.get(leader);
        for (int attempt = 0; attempt < 10 && !w.ready(); attempt++) {
            if (!w.opening) {
                openAndTrack(leader, true);
            }
            c.run(3000);
        }
        c.run(20_000);
    }

    private void check() {
        SimCluster.Writer w = c.writers.get(leader);
        // Alarms of the final owner since it opened (a superseded writer may rightly find a copy it
        // no longer owns emptied or changed by the new owner).
        for (String line : c.log) {
            if ((line.contains("ALARM") || line.contains("DATA LOSS")) && line.contains(" " + w.client + " ")
                    && Double.parseDouble(line.trim().split(" ")[0]) * 1e9 >= w.openedAt - MS) {
                history.violations.add("alarm raised: " + line);
            }
        }
        if (!w.ready()) {
            history.violations.add("after healing, the leader has no open queue");
            return;
        }
        QueueReplica q = w.replica;
        if (q.syncNodes().size() != 2 || q.isRebuilding()) {
            history.violations.add("after healing, not two SYNC copies: " + q.members);
            return;
        }
        // Compare transaction numbers only when nothing is in flight (a lease renewal may be).
        for (int i = 0; i < 100 && q.members.stream().anyMatch(m -> !m.inflight.isEmpty() || !m.backlog.isEmpty()); i++) {
            c.world.runUntil(c.world.now + 5 * MS);
        }
        List<String> nodes = q.syncNodes();
        SimNode.QueueView a = c.world.servers.get(nodes.get(0)).view(Q);
        SimNode.QueueView b = c.world.servers.get(nodes.get(1)).view(Q);
        for (int i = 0; i < 2; i++) {
            long tracked = q.memberOn(nodes.get(i)).txn;
            long actual = (i == 0 ? a : b).txn();
            if (tracked != actual) {
                history.violations.add("txn of " + nodes.get(i) + ": tracked " + tracked + ", copy has " + actual);
            }
        }
        history.checkCopies(nodes, a, b);
    }
}
