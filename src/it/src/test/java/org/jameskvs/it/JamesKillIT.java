package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.jameskvs.testkit.james.WebAdmin;

import org.junit.jupiter.api.Test;

/**
 * Fault (b): {@code kill -9} of James while SMTP load runs, then James started again with the same
 * configuration (same working directory, ports, owner name and {@code epoch} setting: the replication
 * layer reclaims its queues with the next epoch by itself). The load keeps trying meanwhile. Every
 * mail answered 250 before or after the crash must reach the sink: at-least-once, so duplicates
 * (mails RemoteDelivery had sent but not yet removed from the outgoing queue) are allowed and counted.
 * The test requires mail to have been queued (answered 250, not yet delivered) at the kill, some of
 * it deferred by the sink into the outgoing queue, and the restarted James to hold its queues again at
 * a higher epoch than the killed one: the lease of {@code spool} and {@code outgoing} as
 * {@code bin/kvs-admin list} reads it from the KVS nodes names owner {@code james} before the kill and
 * after the restart, the restart's epoch counter above the killed process's (the reclaim, not the
 * killed process's record left behind).
 */
class JamesKillIT {
    private static final int FAULT_MAILS = Integer.getInteger("it.faultMails", 150);
    private static final int SESSIONS = Integer.getInteger("it.faultSessions", 4);
    private static final long PAUSE = Long.getLong("it.pauseMillis", 100);
    private static final List<String> QUEUES = List.of("james/queue/spool@p5", "james/queue/outgoing@p5");

    @Test
    void everyAcceptedMailIsDeliveredAfterJamesIsKilledAndRestarted() throws Exception {
        try (Cluster cluster = Cluster.start("james-kill")) {
            TrackingLoad load = new TrackingLoad("it-james-kill", cluster.james.smtpPort(), SESSIONS, 100 * FAULT_MAILS, PAUSE, 60_000);
            load.start();
            try {
                assertThat(load.awaitAccepted(FAULT_MAILS / 2, Duration.ofSeconds(60))).as(load.summary()).isTrue();
                // For the last seconds before the crash the sink defers (451), so that the crash finds mail
                // in the outgoing queue (delayed for RemoteDelivery's retry) as well as in the spool.
                cluster.sink.deferAll(true);
                Map<String, KvsAdminCli.Lease> leasesBefore = leases(cluster);
                // Until the sink has deferred mail (RemoteDelivery put it back into outgoing, delayed) and
                // outgoing holds mail: the crash then finds mail in outgoing as well as in the spool.
                awaitTrue(() -> cluster.sink.deferred() > 0 && new WebAdmin(cluster.james.webadminPort()).queueSize("outgoing") > 0,
                    Duration.ofSeconds(120), () -> "mail deferred into outgoing: " + cluster.sink.deferred() + " "
                        + cluster.james.queuesSummary());
                int beforeKill = load.acceptedCount();
                String queuesAtKill = cluster.james.queuesSummary();
                cluster.james.kill9();
                // Queued at the kill: answered 250 and not received by the sink, which defers everything
                // until after the kill, so nothing accepted can have left James in between. Without such
                // mail the restart would have nothing to recover and the test would prove nothing.
                List<String> queuedAtKill = load.ids(TrackingLoad.Outcome.ACCEPTED).stream()
                    .filter(id -> cluster.sink.count(id) == 0).toList();
                cluster.sink.deferAll(false);
                long killedAt = System.nanoTime();
                Thread.sleep(1_000); // James down for a second (the load's sessions keep trying); nothing awaited
                cluster.james.startAgain();
                // The restarted James reclaims its queues at startup: their lease names it at a higher epoch.
                AtomicReference<Map<String, KvsAdminCli.Lease>> leasesAfter = new AtomicReference<>();
                awaitTrue(() -> {
                    leasesAfter.set(leases(cluster));
                    return QUEUES.stream().allMatch(q -> leasesAfter.get().get(q).epoch() > leasesBefore.get(q).epoch());
                }, Duration.ofSeconds(120), () -> "leases after the restart " + leasesAfter.get() + ", before " + leasesBefore);
                long downMillis = (System.nanoTime() - killedAt) / 1_000_000;
                int atRestart = load.acceptedCount();
                boolean flowing = load.awaitAccepted(atRestart + FAULT_MAILS / 2, Duration.ofSeconds(120));
                load.stop();
                String phases = "queuesAtKill={" + queuesAtKill + "} queuedAtKill=" + queuedAtKill.size()
                    + " leaseBefore=" + leasesBefore + " leaseAfter=" + leasesAfter.get()
                    + " acceptedBeforeKill=" + beforeKill + " acceptedAfterRestart=" + (load.acceptedCount() - atRestart)
                    + " down_ms=" + downMillis + " " + load.summary();
                assertThat(queuedAtKill).as("mail accepted and not yet delivered when James was killed: %s", phases).isNotEmpty();
                for (String queue : QUEUES) {
                    KvsAdminCli.Lease before = leasesBefore.get(queue);
                    KvsAdminCli.Lease restarted = leasesAfter.get().get(queue);
                    assertThat(before.owner()).as("%s before the kill: %s", queue, before).isEqualTo("james");
                    assertThat(restarted.owner()).as("%s after the restart: %s", queue, restarted).isEqualTo("james");
                    assertThat(restarted.epochCounter()).as("%s epoch counter: before %s, after %s", queue, before, restarted)
                        .isGreaterThan(before.epochCounter());
                }
                assertThat(flowing).as("mail accepted again after the restart: %s\n%s", phases, cluster.diagnostics()).isTrue();

                Scenario.Result result = Scenario.account("james-kill9", cluster.sink, load.ids(TrackingLoad.Outcome.ACCEPTED),
                    load.ids(TrackingLoad.Outcome.UNKNOWN), phases);
                assertThat(result.lost()).as(result.line() + "\n" + cluster.diagnostics()).isZero();
                assertThat(queuedAtKill).as("mail queued at the kill, delivered after the restart")
                    .allSatisfy(id -> assertThat(cluster.sink.count(id)).isPositive());
                assertThat(load.ids(TrackingLoad.Outcome.REJECTED)).as("5xx replies").isEmpty();
            } finally {
                load.stop();
            }
        }
    }

    /** The lease of each of {@link #QUEUES}, read by {@code bin/kvs-admin list} with James's conf. */
    private static Map<String, KvsAdminCli.Lease> leases(Cluster cluster) throws Exception {
        Map<String, KvsAdminCli.Lease> leases = KvsAdminCli.leases(cluster.directory.resolve("james/conf"), "james/");
        assertThat(leases.keySet()).as("leases in kvs-admin list: %s", leases).containsAll(QUEUES);
        return leases;
    }

    private static void awaitTrue(Callable<Boolean> condition, Duration timeout, Supplier<String> what) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (condition.call()) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not within " + timeout + ": " + what.get());
    }
}
