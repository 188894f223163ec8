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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Shared steps of the scenarios: load with a fault injected and healed on a schedule, checks. */
final class Scenarios {
    /** Load per scenario (CI: 6 s, at most 40,000 puts, so that the load outlasts the fault); the soak raises them. */
    static final long LOAD_MILLIS = Long.getLong("faults.loadMillis", 6000);
    static final int MAX_COUNT = Integer.getInteger("faults.maxCount", 40_000);
    static final long FAULT_AT = Long.getLong("faults.faultAtMillis", 1500);
    static final long HEAL_AFTER = Long.getLong("faults.healAfterMillis", 3000);
    static final String OWNER = "james-a";

    interface Step {
        void run() throws Exception;
    }

    private Scenarios() {
    }

    /**
     * Opens the queue as {@link #OWNER}/1, runs the load, injects {@code fault} at {@link #FAULT_AT}
     * and {@code heal} {@link #HEAL_AFTER} later (null: no heal), then verifies.
     */
    static FaultCluster.Outcome faultUnderLoad(String name, FaultCluster cluster, String victim, Step fault, Step heal,
                                               Map<String, String> notes) throws Exception {
        String queue = "spool." + name;
        ReplicationConfig config = cluster.config(queue);
        Ledger ledger = new Ledger();
        ReplicatedQueueOpener opener = ReplicatedQueueOpener.start(config);
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
        TableWatcher watcher = null;
        try {
            KvsQueue q = FaultCluster.openWhenConnected(opener, queue, OWNER, 1, Duration.ofSeconds(20)).queue();
            // fault == null: a gradual fault (e.g. the disk fills up); its moment is when the writer's
            // table first shows the victim leaving SYNC.
            watcher = new TableWatcher(opener, queue, victim, fault == null ? ledger : null);
            ScheduledFuture<?> f = fault == null ? null : s.schedule(() -> {
                fault.run(); // the fault is in effect when this returns (process dead / stopped, link down)
                ledger.markFault();
                System.out.println("[" + name + "] fault injected on " + victim);
                return null;
            }, FAULT_AT, TimeUnit.MILLISECONDS);
            ScheduledFuture<?> h = heal == null ? null : s.schedule(() -> {
                heal.run();
                System.out.println("[" + name + "] healed " + victim);
                return null;
            }, FAULT_AT + HEAL_AFTER, TimeUnit.MILLISECONDS);
            LoadLoop.run(q, name, MAX_COUNT, LOAD_MILLIS, 5, 32, ledger, () -> false);
            if (f != null) {
                f.get(60, TimeUnit.SECONDS);
            }
            if (h != null) {
                h.get(60, TimeUnit.SECONDS);
            }
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
            if (watcher != null) {
                watcher.close();
            }
            s.shutdownNow();
            if (opener != null) {
                opener.close();
            }
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
