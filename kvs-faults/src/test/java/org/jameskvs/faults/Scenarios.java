package org.jameskvs.faults;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.replication.ManagementTable;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;
import org.jameskvs.replication.SyncState;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shared steps of the scenarios: load with a fault injected and healed at <i>events</i> of the load,
 * never at fixed times (a fixed time races the load on a busy machine: the load could end before the
 * heal, or the fault come before any write). The fault comes once {@link #ACKS_BEFORE_FAULT} puts
 * were acknowledged; the heal once {@link #ACKS_THROUGH_FAULT} puts issued after the fault were
 * acknowledged (the writer demonstrably got around the fault: after a kill or SIGSTOP that needs the
 * victim isolated); the load stops once {@link #ACKS_AFTER_HEAL} puts issued after the heal were
 * acknowledged. Every wait is bounded by {@link #MAX_LOAD_MILLIS} and fails the scenario when its
 * event does not come.
 */
final class Scenarios {
    static final int ACKS_BEFORE_FAULT = Integer.getInteger("faults.acksBeforeFault", 2000);
    static final int ACKS_THROUGH_FAULT = Integer.getInteger("faults.acksThroughFault", 2000);
    static final int ACKS_AFTER_HEAL = Integer.getInteger("faults.acksAfterHeal", 2000);
    /** Bounds of one scenario's load: puts issued, and time (each wait fails past it). */
    static final int MAX_COUNT = Integer.getInteger("faults.maxCount", 100_000);
    static final long MAX_LOAD_MILLIS = Long.getLong("faults.maxLoadMillis", 120_000);
    /**
     * Puts one phase (before the fault, through it, after the heal) may issue; beyond it the load
     * waits for the next phase. Three phases stay below {@link #MAX_COUNT}, so a fast machine cannot
     * spend the whole count before the heal (a restart takes seconds) and end the load early.
     */
    static final int PHASE_BUDGET = MAX_COUNT / 4;
    /** Puts per load phase of the damaged-journal scenarios. */
    static final int PHASE_PUTS = Integer.getInteger("faults.phasePuts", 5000);
    static final String OWNER = "james-a";

    interface Step {
        void run() throws Exception;
    }

    private Scenarios() {
    }

    /**
     * Opens the queue as {@link #OWNER}/1, runs the load, injects {@code fault} and then {@code heal}
     * (null: no heal) at the load's events (see the class comment), then verifies. {@code fault ==
     * null} is a gradual fault (e.g. the disk fills up): its moment is when the writer's table first
     * shows the victim leaving SYNC.
     */
    static FaultCluster.Outcome faultUnderLoad(String name, FaultCluster cluster, String victim, Step fault, Step heal,
                                               Map<String, String> notes) throws Exception {
        String queue = "spool." + name;
        ReplicationConfig config = cluster.config(queue);
        Ledger ledger = new Ledger();
        ReplicatedQueueOpener opener = ReplicatedQueueOpener.start(config);
        ExecutorService loader = Executors.newSingleThreadExecutor();
        TableWatcher watcher = null;
        AtomicBoolean enough = new AtomicBoolean();
        try {
            KvsQueue q = FaultCluster.openWhenConnected(opener, queue, OWNER, 1, Duration.ofSeconds(20)).queue();
            watcher = new TableWatcher(opener, queue, victim, fault == null ? ledger : null);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MAX_LOAD_MILLIS);
            Future<Integer> load = loader.submit(() -> LoadLoop.run(q, name, MAX_COUNT, MAX_LOAD_MILLIS, 5, 32, ledger,
                    enough::get, () -> ledger.issuedInPhase() >= PHASE_BUDGET));
            await(name, "puts acknowledged before the fault", load, deadline,
                    () -> ledger.acked.size() >= ACKS_BEFORE_FAULT, ledger);
            if (fault != null) {
                fault.run(); // the fault is in effect when this returns (process dead / stopped, link down)
                ledger.markFault();
                System.out.println("[" + name + "] fault injected on " + victim + " after " + ledger.acked.size()
                        + " acknowledged puts");
            } else {
                await(name, victim + " leaving SYNC (gradual fault)", load, deadline, ledger::faultMarked, ledger);
            }
            await(name, ACKS_THROUGH_FAULT + " puts issued after the fault acknowledged", load, deadline,
                    () -> ledger.ackedAfterFault() >= ACKS_THROUGH_FAULT, ledger);
            if (heal != null) {
                heal.run();
                ledger.markHeal();
                System.out.println("[" + name + "] healed " + victim + " after " + ledger.ackedAfterFault()
                        + " puts issued after the fault were acknowledged");
                await(name, ACKS_AFTER_HEAL + " puts issued after the heal acknowledged", load, deadline,
                        () -> ledger.ackedAfterHeal() >= ACKS_AFTER_HEAL, ledger);
            }
            enough.set(true);
            load.get(120, TimeUnit.SECONDS);
            System.out.println("[" + name + "] load done: " + ledger);
            watcher.close();
            Map<String, String> all = new java.util.LinkedHashMap<>(notes);
            all.put("victim_left_sync_ms", Long.toString(watcher.victimLeftSyncMillis(ledger)));
            all.put("failures", ledger.failures.toString().replace(" ", ""));
            FaultCluster.Outcome o = cluster.verify(name, config, queue, ledger, opener, OWNER, 2,
                    ledger.switchoverMillis(), all);
            opener = null;
            assertSafe(o);
            return o;
        } finally {
            enough.set(true);
            if (watcher != null) {
                watcher.close();
            }
            loader.shutdown();
            if (!loader.awaitTermination(120, TimeUnit.SECONDS)) {
                loader.shutdownNow();
            }
            if (opener != null) {
                opener.close();
            }
        }
    }

    /**
     * Waits for an event of the load, polling every 20 ms; fails when the deadline passes or the load
     * ended (its count or time bound) before the event.
     */
    static void await(String scenario, String event, Future<?> load, long deadlineNanos, BooleanSupplier happened,
                      Ledger ledger) throws InterruptedException {
        while (!happened.getAsBoolean()) {
            if (load != null && load.isDone()) {
                throw new AssertionError("[" + scenario + "] the load ended before " + event + ": " + ledger);
            }
            if (System.nanoTime() - deadlineNanos > 0) {
                throw new AssertionError("[" + scenario + "] no " + event + " within " + MAX_LOAD_MILLIS + " ms: "
                        + ledger);
            }
            Thread.sleep(20);
        }
    }

    static void assertSafe(FaultCluster.Outcome o) {
        assertThat(o.acknowledged()).as("acknowledged puts").isPositive();
        assertThat(o.syncNodes()).as("two SYNC copies after the heal\n" + o.table()).hasSize(2);
        assertThat(o.lost()).as("acknowledged puts missing from a SYNC copy or from the new owner").isZero();
        assertThat(o.resurrected()).as("acknowledged deletes that came back").isZero();
        assertThat(o.duplicated()).as("messages present twice").isZero();
    }

    /** Polls the management table (every 50 ms) and remembers what the victim's copy went through. */
    static final class TableWatcher implements AutoCloseable {
        final Set<String> seen = ConcurrentHashMap.newKeySet();
        final AtomicLong victimLeftSync = new AtomicLong(Long.MAX_VALUE);
        private final ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();

        TableWatcher(ReplicatedQueueOpener opener, String queue, String victim) {
            this(opener, queue, victim, null);
        }

        /** {@code markFaultOn}: when set, the victim's first leaving SYNC marks the fault in this ledger. */
        TableWatcher(ReplicatedQueueOpener opener, String queue, String victim, Ledger markFaultOn) {
            s.scheduleWithFixedDelay(() -> {
                try {
                    var rows = FaultCluster.rows(opener, queue);
                    boolean victimSync = false;
                    for (ManagementTable.Row r : rows) {
                        seen.add(r.node() + ":" + r.sync() + (r.note().isEmpty() ? "" : "(" + r.note().split(" ")[0] + ")"));
                        if (r.node().equals(victim) && r.sync() == SyncState.SYNC && r.note().isEmpty()) {
                            victimSync = true;
                        }
                    }
                    if (!victimSync) {
                        long now = System.nanoTime();
                        victimLeftSync.accumulateAndGet(now, Math::min);
                        if (markFaultOn != null) {
                            markFaultOn.markFault(now);
                        }
                    }
                } catch (RuntimeException ignored) {
                    // opener closing
                }
            }, 0, 50, TimeUnit.MILLISECONDS);
        }

        long victimLeftSyncMillis(Ledger ledger) {
            long left = victimLeftSync.get();
            long fault = ledger.faultNanos();
            return left == Long.MAX_VALUE || fault == Long.MAX_VALUE ? -1 : (left - fault) / 1_000_000;
        }

        @Override
        public void close() {
            s.shutdownNow();
        }
    }

    /** Offset just past the last non-zero byte of a (sparse, preallocated) journal file. */
    static long dataEnd(Path file) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long len = f.length();
            byte[] buf = new byte[1 << 20];
            for (long end = len; end > 0; ) {
                long start = Math.max(0, end - buf.length);
                int n = (int) (end - start);
                f.seek(start);
                f.readFully(buf, 0, n);
                for (int i = n - 1; i >= 0; i--) {
                    if (buf[i] != 0) {
                        return start + i + 1;
                    }
                }
                end = start;
            }
            return 0;
        }
    }
}
