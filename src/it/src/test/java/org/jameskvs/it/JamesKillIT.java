package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Fault (b): {@code kill -9} of James while SMTP load runs, then James started again with the same
 * configuration (same working directory, ports, owner name and {@code epoch} setting: the replication
 * layer reclaims its queues with the next epoch by itself). The load keeps trying meanwhile. Every
 * mail answered 250 before or after the crash must reach the sink: at-least-once, so duplicates
 * (mails RemoteDelivery had sent but not yet removed from the outgoing queue) are allowed and counted.
 * The test requires mail to have been queued (answered 250, not yet delivered) at the kill.
 */
class JamesKillIT {
    private static final int FAULT_MAILS = Integer.getInteger("it.faultMails", 150);
    private static final int SESSIONS = Integer.getInteger("it.faultSessions", 4);
    private static final long PAUSE = Long.getLong("it.pauseMillis", 100);
    private static final long DEFER_BEFORE_KILL_MILLIS = 2_000;

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
                Thread.sleep(DEFER_BEFORE_KILL_MILLIS);
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
                Thread.sleep(1_000);
                cluster.james.startAgain();
                long downMillis = (System.nanoTime() - killedAt) / 1_000_000;
                int atRestart = load.acceptedCount();
                boolean flowing = load.awaitAccepted(atRestart + FAULT_MAILS / 2, Duration.ofSeconds(120));
                load.stop();
                String phases = "queuesAtKill={" + queuesAtKill + "} queuedAtKill=" + queuedAtKill.size()
                    + " acceptedBeforeKill=" + beforeKill + " acceptedAfterRestart=" + (load.acceptedCount() - atRestart)
                    + " down_ms=" + downMillis + " " + load.summary();
                assertThat(queuedAtKill).as("mail accepted and not yet delivered when James was killed: %s", phases).isNotEmpty();
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
}
