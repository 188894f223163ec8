package org.jameskvs.faults;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.testkit.ChildProcess;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.ReplicatedQueue;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults of real OS processes under load: three KVS server processes (own data directories and
 * ports on 127.0.0.1), the queue placed on kvs1+kvs2 (kvs3 is the spare for a replacement copy), a
 * writer through {@link ReplicatedQueueOpener} putting uniquely identified 1 KB messages and
 * deleting every fifth. After the heal, every acknowledged put that was not deleted must be on
 * both SYNC copies (read directly from each node) and readable by a new owner; see
 * {@link FaultCluster#verify}. Each scenario prints one {@code scenario=...} line.
 */
class ProcessFaultsTest {
    @TempDir
    Path dir;

    /** a. kill -9 of a KVS node of the queue's pair during load; it comes back (stale) once the writer got around it. */
    @Test
    void killNodeDuringLoadAndRestartItStale() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            NodeProcess victim = c.node("kvs2");
            Scenarios.faultUnderLoad("kill9-node", c, victim.name, victim::kill9, victim::start,
                    Map.of("victim_returns", "stale"));
        }
    }

    /** a'. The same, but the node returns EMPTY (its data directory was lost with it). */
    @Test
    void killNodeDuringLoadAndRestartItEmpty() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            NodeProcess victim = c.node("kvs2");
            Scenarios.faultUnderLoad("kill9-node-empty", c, victim.name, victim::kill9, () -> {
                deleteTree(victim.dataDir);
                victim.start();
            }, Map.of("victim_returns", "empty"));
        }
    }

    /**
     * c. SIGSTOP of a node of the pair beyond the heartbeat timeout (600 ms): SIGCONT comes only once
     * puts issued after the stop were acknowledged, which needs the frozen node isolated.
     */
    @Test
    void sigstopNodeBeyondHeartbeatTimeout() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            NodeProcess victim = c.node("kvs2");
            Scenarios.faultUnderLoad("sigstop-node", c, victim.name, victim::pause, victim::resume, Map.of());
        }
    }

    /**
     * d. kvs2's journal is limited to 12 MB ({@code journal.maxBytes}): it answers DISK_FULL part-way
     * through the load (about 10,000 puts of 1 KB). Writes must fail or move to kvs3, never be
     * acknowledged with one copy. The fault is gradual: switchover is measured from the moment the
     * writer's table first showed kvs2 leaving SYNC (its first DISK_FULL answer).
     */
    @Test
    void fullDiskOnOneNode() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of("kvs2", List.of("journal.maxBytes=12582912"))).start()) {
            FaultCluster.Outcome o = Scenarios.faultUnderLoad("disk-full", c, "kvs2", null, null,
                    Map.of("journal_maxBytes", "12582912"));
            assertThat(o.syncNodes()).as("the full node cannot hold a SYNC copy").doesNotContain("kvs2");
        }
    }

    /** e1. Newest journal file of a member truncated while it was down (see {@link #damagedJournal}). */
    @Test
    void truncatedJournalIsDetectedAndRebuilt() throws Exception {
        damagedJournal("journal-truncated", (file, end) -> {
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                f.setLength(end * 7 / 10); // the last 30 % of the records are gone
            }
            return "truncated " + file.getFileName() + " from " + end + " to " + (end * 7 / 10);
        });
    }

    /** e2. Bytes flipped in the newest journal file of a member while it was down. */
    @Test
    void bitFlippedJournalIsDetectedAndRebuilt() throws Exception {
        damagedJournal("journal-bitflip", (file, end) -> {
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                for (long at : new long[]{end * 6 / 10, end * 7 / 10, end * 8 / 10}) {
                    f.seek(at);
                    int b = f.read();
                    f.seek(at);
                    f.write(b ^ 0x10);
                }
            }
            return "flipped bit 4 at 60/70/80 % of " + end + " bytes of " + file.getFileName();
        });
    }

    interface Damage {
        String apply(Path file, long dataEnd) throws Exception;
    }

    /**
     * e. Phase 1: {@link Scenarios#PHASE_PUTS} puts with both copies SYNC; the owner stops. kvs2 (a
     * member) is killed, the newest {@code *.cq4} under its data directory is damaged, kvs2 restarts
     * (its recovery drops the bad tail). The damage must be real: read directly, kvs2's copy now has
     * fewer transactions than kvs1's (it lacks acknowledged mutations). Phase 2: the owner reclaims
     * the queue (epoch 2) and writes on. Detection is then required, not assumed: kvs2's copy is
     * either no longer a SYNC copy (isolated, replaced) or a SYNC copy that holds every acknowledged
     * write and no acknowledged delete ({@link FaultCluster#verify}), which the copy it had after the
     * damage did not: it was rebuilt.
     */
    private void damagedJournal(String name, Damage damage) throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            String queue = "spool." + name;
            ReplicationConfig config = c.config(queue);
            Ledger ledger = new Ledger();
            try (ReplicatedQueueOpener first = ReplicatedQueueOpener.start(config)) {
                KvsQueue q = FaultCluster.openWhenConnected(first, queue, Scenarios.OWNER, 1, Duration.ofSeconds(20)).queue();
                LoadLoop.run(q, name + "-p1", Scenarios.PHASE_PUTS, Scenarios.MAX_LOAD_MILLIS, 5, 32, ledger, () -> false);
                assertThat(FaultCluster.awaitHealed(first, queue, Duration.ofSeconds(20))).isTrue();
                System.out.println("[" + name + "] phase 1: " + ledger + "\n" + first.managementTable().format());
            }
            NodeProcess victim = c.node("kvs2");
            victim.kill9();
            Path file = victim.newestJournalFile();
            long end = Scenarios.dataEnd(file);
            String what = damage.apply(file, end);
            System.out.println("[" + name + "] " + what);
            victim.start();
            long damagedTxn = FaultCluster.txnOn(victim, queue);
            long intactTxn = FaultCluster.txnOn(c.node("kvs1"), queue);
            System.out.println("[" + name + "] transactions read directly: kvs1 " + intactTxn + ", damaged kvs2 " + damagedTxn);
            assertThat(damagedTxn).as("the damage cost kvs2's copy acknowledged mutations").isLessThan(intactTxn);
            String recoveryLog = victim.log().lines().filter(l -> l.contains("ecover") || l.contains("amage")
                    || l.contains("epair") || l.contains("bad")).reduce("", (a, b) -> a + "\n  " + b);
            System.out.println("[" + name + "] kvs2 restarted; its recovery said:" + recoveryLog);

            ReplicatedQueueOpener second = ReplicatedQueueOpener.start(config);
            Scenarios.TableWatcher watcher = null;
            try {
                ledger.markFault();
                KvsQueue q = FaultCluster.openWhenConnected(second, queue, Scenarios.OWNER, 2, Duration.ofSeconds(20)).queue();
                watcher = new Scenarios.TableWatcher(second, queue, victim.name);
                System.out.println("[" + name + "] reclaimed:\n" + second.managementTable().format());
                int ackedBefore = ledger.acked.size();
                long failedBefore = ledger.failureCount();
                int issued2 = LoadLoop.run(q, name + "-p2", Scenarios.PHASE_PUTS, Scenarios.MAX_LOAD_MILLIS, 5, 32, ledger, () -> false);
                watcher.close();
                // Liveness: every put of phase 2 got an answer (LoadLoop drains for 60 s), and the
                // reclaimed queue took writes. Seen failing under heavy machine load: 32 puts issued
                // right after the reclaim were never answered (see the module's report).
                assertThat(ledger.acked.size() - ackedBefore + (ledger.failureCount() - failedBefore))
                        .as("phase-2 puts answered (of %d issued)", issued2).isEqualTo(issued2);
                assertThat(ledger.acked.size()).as("phase-2 puts acknowledged").isGreaterThan(ackedBefore);
                Map<String, String> notes = new LinkedHashMap<>();
                notes.put("damage", what.replace(' ', '_'));
                notes.put("txn_kvs1_kvs2_after_damage", intactTxn + "/" + damagedTxn);
                notes.put("kvs2_states_seen", String.join(",", new java.util.TreeSet<>(watcher.seen)));
                FaultCluster.Outcome o = c.verify(name, config, queue, ledger, second, Scenarios.OWNER, 3,
                        ledger.switchoverMillis(), notes);
                second = null;
                // Every SYNC copy, kvs2's if it is one, holds every acknowledged write: with kvs2's copy
                // known to lack some after the damage, that is the detection (isolated or rebuilt).
                Scenarios.assertSafe(o);
                String how = o.syncNodes().contains("kvs2") ? "rebuilt" : "isolated";
                System.out.println("[" + name + "] damaged copy on kvs2 detected: " + how);
                FaultCluster.record("scenario=" + name + " damaged_copy=" + how);
            } finally {
                if (watcher != null) {
                    watcher.close();
                }
                if (second != null) {
                    second.close();
                }
            }
        }
    }

    /**
     * b. kill -9 of the OWNER: the writer runs as its own JVM ({@link WriterMain}) and reports
     * every ack on stdout; it is killed mid-load, and another James node ("james-b") takes the
     * queue over when the lease expires (lease 300 ms / 1.5 s), then writes on. Every write the
     * dead owner had acknowledged must be there. switchover = kill to first ack of the new owner.
     */
    @Test
    void killOwnerProcessAndTakeOver() throws Exception {
        try (FaultCluster c = FaultCluster.local(dir, 3, Map.of()).start()) {
            String name = "kill9-owner";
            String queue = "spool." + name;
            ReplicationConfig config = c.config(queue);
            Path props = dir.resolve("writer.properties");
            WriterMain.writeProperties(config, props);
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-cp", ChildProcess.classPath(),
                    WriterMain.class.getName(), props.toString(), queue, Scenarios.OWNER, "1", name + "-w1",
                    "1000000", "60000", "5"));
            Ledger ledger = new Ledger();
            Process writer = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(
                    dir.resolve("writer.log").toFile())).start();
            CompletableFuture<Void> opened = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        String[] p = line.split(" ");
                        switch (p[0]) {
                            case "OPEN" -> opened.complete(null);
                            case "A" -> ledger.acked.add(p[1]);
                            case "X" -> ledger.deleteAttempted.add(p[1]);
                            case "D" -> ledger.deleted.add(p[1]);
                            case "F" -> ledger.onPutFailed(p[1], Status.valueOf(p[2]));
                            default -> System.out.println("[writer] " + line);
                        }
                    }
                } catch (Exception e) {
                    System.out.println("[writer] output ended: " + e);
                }
            }, "writer-output");
            reader.start();
            try {
                opened.get(60, TimeUnit.SECONDS);
                Scenarios.await(name, "puts acknowledged by the owner before its kill", null,
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Scenarios.MAX_LOAD_MILLIS),
                        () -> ledger.acked.size() >= Scenarios.ACKS_BEFORE_FAULT, ledger);
                writer.destroyForcibly(); // SIGKILL
                ledger.markFault();
                writer.waitFor(20, TimeUnit.SECONDS);
                reader.join(10_000);
                int ackedByDead = ledger.acked.size();
                System.out.println("[" + name + "] owner killed after " + ackedByDead + " acknowledged puts");
                assertThat(ackedByDead).isPositive();

                ReplicatedQueueOpener next = ReplicatedQueueOpener.start(config);
                try {
                    OpenResult r = next.takeOverWhenLeaseExpires(queue, OpenOptions.writer("james-b", 1))
                            .get(30, TimeUnit.SECONDS);
                    assertThat(r.isOk()).as("takeover: %s %s", r.status(), r.reason()).isTrue();
                    ReplicatedQueue q = (ReplicatedQueue) r.queue();
                    System.out.println("[" + name + "] james-b took over (epoch " + q.epoch() + ") "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ledger.faultNanos()) + " ms after the kill\n"
                            + next.managementTable().format());
                    LoadLoop.run(q, name + "-w2", Scenarios.PHASE_PUTS, Scenarios.MAX_LOAD_MILLIS, 5, 32, ledger, () -> false);
                    FaultCluster.Outcome o = c.verify(name, config, queue, ledger, next, "james-b", q.epoch() + 1,
                            ledger.switchoverMillis(), Map.of("acked_by_killed_owner", Integer.toString(ackedByDead)));
                    next = null;
                    Scenarios.assertSafe(o);
                } finally {
                    if (next != null) {
                        next.close();
                    }
                }
            } finally {
                writer.destroyForcibly();
            }
        }
    }

    static void deleteTree(Path p) throws java.io.IOException {
        if (!java.nio.file.Files.exists(p)) {
            return;
        }
        try (var s = java.nio.file.Files.walk(p)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
        }
    }
}
