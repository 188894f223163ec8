package org.jameskvs.faults;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults in a row while one writer puts and deletes without pause: a nemesis that, round after
 * round, picks a node of the cluster and one of the given {@link Fault}s for it. The single-fault
 * scenarios ({@link ProcessFaultsTest}, {@link NetworkFaultsTest}) each start from a healthy
 * cluster; here a fault may come while the previous one is still being repaired (a copy half
 * rebuilt, a node just back, its successor still catching up), which is where compound defects
 * hide. The deterministic simulation covers such orders with a model network; this runs the real
 * transport, real timers and real processes.
 *
 * <p>One node is faulty at a time (each round ends with the node healed), so every fault that keeps
 * the disk only delays: a killed node's journal is in the page cache and comes back with it. A fault
 * that destroys a copy ({@link Fault#destroysCopy}) comes only once the writer's table shows two
 * SYNC copies and no rebuild (waited for, bounded): a whole copy is then left elsewhere.
 *
 * <p>Each round: wait until 200-1,000 more puts are acknowledged (the writer makes progress again
 * after the previous round: failing this wait is a finding, not bad luck), inject the fault, hold it
 * 50 ms to 3 s (below and beyond the heartbeat timeout of 600 ms: from a blip nobody notices to an
 * isolation and a rebuild under way), heal. The fault's length is an input of the scenario, never
 * part of what is asserted: a fault on the only whole copy stops acknowledgements until it ends, so
 * progress could not be its trigger.
 *
 * <p>Asserted at the end, after a last stretch of progress and a new owner's reclaim
 * ({@link FaultCluster#verify}): every acknowledged put not deleted is on both SYNC copies and read
 * back through the new owner, no acknowledged delete came back, no message is there twice. The
 * seed ({@code -Dfaults.chaosSeed}) is printed first; it fixes the rounds' victims, faults, counts
 * and hold times, not the machine's timing, so a rerun with it replays the same faults in the same
 * order, not necessarily the same interleaving.
 */
final class ChaosSoak {
    /**
     * The writer's pace, puts per second: steady through faults and repairs alike (a writer at full
     * speed would spend any count before the first repair ended), well below what two copies take.
     */
    static final int PUTS_PER_SECOND = Integer.getInteger("faults.chaosPutsPerSecond", 1500);
    /** Bound of each wait for progress or for a healed table. */
    static final Duration WAIT = Duration.ofSeconds(90);

    /** A step on the victim node. */
    interface NodeStep {
        void on(NodeProcess node) throws Exception;
    }

    /** A kind of fault: injected, held, healed; {@code destroysCopy}: only injected with two copies in sync. */
    record Fault(String name, boolean destroysCopy, NodeStep inject, NodeStep heal) {
    }

    /** The process faults, on any cluster. */
    static final List<Fault> PROCESS_FAULTS = List.of(
            new Fault("kill", false, NodeProcess::kill9, NodeProcess::start),
            new Fault("pause", false, NodeProcess::pause, NodeProcess::resume),
            new Fault("pause_then_kill", false, NodeProcess::pause, n -> {
                n.kill9();
                n.start();
            }),
            new Fault("wipe", true, NodeProcess::kill9, n -> {
                ProcessFaultsTest.deleteTree(n.dataDir);
                n.start();
            }));

    private ChaosSoak() {
    }

    /** The process fault of that name. */
    static Fault processFault(String name) {
        return PROCESS_FAULTS.stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow();
    }

    /** Runs {@code rounds} rounds of {@code faults} on {@code c} (started), then verifies. */
    static FaultCluster.Outcome run(String name, FaultCluster c, List<Fault> faults, int rounds) throws Exception {
        long seed = Long.getLong("faults.chaosSeed", System.currentTimeMillis());
        System.out.println("[" + name + "] seed " + seed + " (rerun the same faults: -Dfaults.chaosSeed=" + seed + ")");
        SplittableRandom random = new SplittableRandom(seed);
        String queue = "spool." + name;
        ReplicationConfig config = c.config(queue);
        Ledger ledger = new Ledger();
        ReplicatedQueueOpener opener = ReplicatedQueueOpener.start(config);
        ExecutorService loader = Executors.newSingleThreadExecutor();
        AtomicBoolean enough = new AtomicBoolean();
        Map<String, Integer> done = new TreeMap<>();
        try {
            KvsQueue q = FaultCluster.openWhenConnected(opener, queue, Scenarios.OWNER, 1, Duration.ofSeconds(20)).queue();
            long loadMillis = (rounds + 2) * 2 * WAIT.toMillis();
            long loadStart = System.nanoTime();
            Future<Integer> load = loader.submit(() -> LoadLoop.run(q, name, Integer.MAX_VALUE, loadMillis, 5, 32,
                    ledger, enough::get, () -> ledger.attempted.size()
                            > (System.nanoTime() - loadStart) / 1_000_000 * PUTS_PER_SECOND / 1000));
            for (int round = 1; round <= rounds; round++) {
                NodeProcess victim = c.nodes.get(random.nextInt(c.nodes.size()));
                Fault fault = faults.get(random.nextInt(faults.size()));
                int before = 200 + random.nextInt(800);
                long holdMillis = 50 + random.nextInt(3000);
                awaitAcks(name, round, "puts acknowledged before the fault", ledger, before, load);
                if (fault.destroysCopy()) {
                    assertThat(FaultCluster.awaitHealed(opener, queue, WAIT))
                            .as("[%s] round %d: two SYNC copies before %s of %s\n%s", name, round, fault.name(),
                                    victim.name, opener.managementTable().format()).isTrue();
                }
                int ackedAtFault = ledger.acked.size();
                fault.inject().on(victim);
                Thread.sleep(holdMillis);
                int ackedInFault = ledger.acked.size() - ackedAtFault;
                fault.heal().on(victim);
                done.merge(fault.name(), 1, Integer::sum);
                System.out.println("[" + name + "] round " + round + ": " + fault.name() + " " + victim.name + " for "
                        + holdMillis + " ms, " + ackedInFault + " puts acknowledged meanwhile; " + ledger);
            }
            awaitAcks(name, rounds + 1, "puts acknowledged after the last heal", ledger, 1000, load);
            enough.set(true);
            load.get(120, TimeUnit.SECONDS);
            System.out.println("[" + name + "] load done: " + ledger);
            Map<String, String> notes = new LinkedHashMap<>();
            notes.put("seed", Long.toString(seed));
            notes.put("rounds", Integer.toString(rounds));
            done.forEach((k, v) -> notes.put(k, Integer.toString(v)));
            notes.put("failures", ledger.failures.toString().replace(" ", ""));
            FaultCluster.Outcome o = c.verify(name, config, queue, ledger, opener, Scenarios.OWNER, 2, -1, notes);
            opener = null;
            Scenarios.assertSafe(o);
            assertThat(o.acknowledged()).as("puts acknowledged over the soak").isGreaterThanOrEqualTo(rounds * 200 + 1000);
            return o;
        } finally {
            enough.set(true);
            loader.shutdown();
            if (!loader.awaitTermination(120, TimeUnit.SECONDS)) {
                loader.shutdownNow();
            }
            if (opener != null) {
                opener.close();
            }
        }
    }

    /** Waits until {@code n} more puts are acknowledged than now; fails past {@link #WAIT} or when the load ended. */
    private static void awaitAcks(String name, int round, String event, Ledger ledger, int n, Future<?> load)
            throws InterruptedException {
        int target = ledger.acked.size() + n;
        Scenarios.await(name + " round " + round, n + " " + event, load,
                System.nanoTime() + WAIT.toNanos(), () -> ledger.acked.size() >= target, ledger);
    }
}
