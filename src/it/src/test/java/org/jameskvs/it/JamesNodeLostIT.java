package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * A James node lost for good: SMTP load spread over two James nodes (one load per node, as a round
 * robin would), the sink holding every session before its greeting so that the mail queues up in both
 * nodes' spools and outgoing queues; then {@code kill -9} of james-a, never restarted. james-b sees
 * james-a's lease expire, adopts its namespace (every queue and priority level) and delivers its mail
 * through its own mailets once the sink lets go.
 *
 * <p>Asserts: every mail either node answered 250 reaches the sink (lost 0); james-a's mails all
 * after the kill (so james-b delivered them); duplicates at most james-a's parallel deliveries; both
 * error repositories empty (james-a's read before the kill, when nothing could have changed it after).
 * Measures (printed and appended to {@code target/it/scenarios.txt}): when the adoption started after
 * the kill, and the drain rate of the adopted backlog against james-b's own. Size:
 * {@code -Dit.nodeLostMails} (default 1,000; the full run is 5,000).
 */
class JamesNodeLostIT {
    private static final int MAILS = Integer.getInteger("it.nodeLostMails", 1_000);
    private static final int SESSIONS = Integer.getInteger("it.faultSessions", 4);

    @Test
    void everyMailTheLostNodeAcceptedIsDeliveredByTheSurvivor() throws Exception {
        try (JamesPair pair = JamesPair.start("james-node-lost")) {
            pair.sink.holdAll(true);
            TrackingLoad loadA = new TrackingLoad("lost-a", pair.a.smtpPort(), SESSIONS, MAILS / 2, 0, 60_000).start();
            TrackingLoad loadB = new TrackingLoad("lost-b", pair.b.smtpPort(), SESSIONS, MAILS - MAILS / 2, 0, 60_000).start();
            Duration sending = Duration.ofSeconds(60 + MAILS / 10);
            loadA.awaitDone(sending);
            loadB.awaitDone(sending);
            List<String> acceptedA = loadA.ids(TrackingLoad.Outcome.ACCEPTED);
            List<String> acceptedB = loadB.ids(TrackingLoad.Outcome.ACCEPTED);
            assertThat(acceptedA.size()).as("james-a accepted: %s", loadA.summary()).isEqualTo(MAILS / 2);
            assertThat(acceptedB.size()).as("james-b accepted: %s", loadB.summary()).isEqualTo(MAILS - MAILS / 2);
            int errorsA = pair.a.errorRepositorySize();
            String queuesAtKill = pair.a.queuesSummary();

            pair.a.kill9();
            long killedAt = System.nanoTime();
            assertThat(acceptedA).as("nothing of james-a's reached the held sink before the kill")
                .allSatisfy(id -> assertThat(pair.sink.count(id)).isZero());
            Duration adoptionBound = Duration.ofMillis(JamesPair.LEASE_TIMEOUT_MILLIS).plusSeconds(60);
            long adoptingAt = JamesPair.awaitLog(pair.b, "adopting namespace james-a", adoptionBound);
            long drainedAt = JamesPair.awaitLog(pair.b, "adopted namespace james-a drained", adoptionBound.plusSeconds(120));
            assertThat(adoptingAt).as("james-b started adopting james-a\n%s", pair.diagnostics()).isPositive();
            assertThat(drainedAt).as("james-b moved james-a's queues\n%s", pair.diagnostics()).isPositive();
            long releasedAt = System.nanoTime();
            pair.sink.holdAll(false);

            List<String> accepted = new ArrayList<>(acceptedA);
            accepted.addAll(acceptedB);
            String measured = "adoptionStart_ms=" + (adoptingAt - killedAt) / 1_000_000 + " leaseTimeout_ms="
                + JamesPair.LEASE_TIMEOUT_MILLIS + " moved_ms=" + (drainedAt - adoptingAt) / 1_000_000;
            Scenario.Result result = Scenario.account("james-node-lost", pair.sink, accepted, loadA.ids(TrackingLoad.Outcome.UNKNOWN),
                "queuesAtKill={" + queuesAtKill + "} " + measured);
            double adoptedRate = pair.drainRate(acceptedA);
            double ownRate = pair.drainRate(acceptedB);
            Scenario.report(String.format("scenario=james-node-lost-rates mails=%d %s adoptedDrain_per_s=%.1f ownDrain_per_s=%.1f"
                    + " ratio=%.2f releasedToAllDelivered_ms=%d", MAILS, measured, adoptedRate, ownRate,
                ownRate == 0 ? 0 : adoptedRate / ownRate, (System.nanoTime() - releasedAt) / 1_000_000));

            assertThat(result.lost()).as(result.line() + "\n" + pair.diagnostics()).isZero();
            assertThat(result.duplicated()).as("duplicates: at most james-a's mail in flight (its parallel deliveries)")
                .isLessThanOrEqualTo(JamesPair.IN_FLIGHT_DELIVERIES);
            assertThat(errorsA).as("james-a's error repository at the kill").isZero();
            assertThat(pair.b.errorRepositorySize()).as("james-b's error repository").isZero();
            assertThat(pair.b.logText()).as("james-b not fenced").doesNotContain("KVS spool FENCED");
        }
    }
}
