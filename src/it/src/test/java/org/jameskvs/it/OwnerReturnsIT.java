package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The owner comes back: james-a queues mail (the sink holds every session), is killed with
 * {@code kill -9}; james-b adopts its namespace and, the sink let go, delivers the adopted mail while
 * james-a is started again on the same configuration. james-a takes its namespace back (the
 * hand-over: james-b's adoption ends at its next call on james-a's queues) and accepts mail again.
 * Asserts: every mail james-a answered 250, before and after its return, reaches the sink (lost 0);
 * duplicates at most one adoption move block (the block being moved when the hand-over cut it);
 * neither node fenced on its own queues; both error repositories empty.
 */
class OwnerReturnsIT {
    private static final int MAILS = Integer.getInteger("it.ownerReturnsMails", 400);
    private static final int SESSIONS = Integer.getInteger("it.faultSessions", 4);
    /** kvs-spool's adoption.moveBlock default. */
    private static final int MOVE_BLOCK = 64;

    @Test
    void theOwnerRestartedWhileItsAdopterDeliversTakesItsNamespaceBackAndNothingIsLost() throws Exception {
        try (JamesPair pair = JamesPair.start("owner-returns")) {
            List<String> accepted = pair.queueOnAWhileTheSinkHolds("returns-a", SESSIONS, MAILS, Duration.ofSeconds(60 + MAILS / 10));

            pair.a.kill9();
            long claimed = JamesPair.awaitLog(pair.b, "adopted namespace james-a (claim holds)",
                Duration.ofMillis(JamesPair.LEASE_TIMEOUT_MILLIS).plusSeconds(60));
            assertThat(claimed).as("james-b adopted james-a\n%s", pair.diagnostics()).isPositive();
            pair.sink.holdAll(false); // james-b delivers the adopted mail while james-a starts again
            pair.a.startAgain();
            assertThat(pair.a.logText()).contains("took namespace james-a back from its adopter");
            assertThat(JamesPair.awaitLog(pair.b, "adoption of namespace james-a ended", Duration.ofSeconds(60)))
                .as("james-b's adoption ended by the hand-over\n%s", pair.diagnostics()).isPositive();

            TrackingLoad after = new TrackingLoad("returned-a", pair.a.smtpPort(), SESSIONS, MAILS / 4, 0, 60_000).start();
            after.awaitDone(Duration.ofSeconds(60 + MAILS / 10));
            assertThat(after.ids(TrackingLoad.Outcome.ACCEPTED)).as(after.summary()).hasSize(MAILS / 4);
            accepted.addAll(after.ids(TrackingLoad.Outcome.ACCEPTED));

            Scenario.Result result = Scenario.account("owner-returns", pair.sink, accepted, List.of(), "");
            assertThat(result.lost()).as(result.line() + "\n" + pair.diagnostics()).isZero();
            assertThat(result.duplicated()).isLessThanOrEqualTo(MOVE_BLOCK);
            assertThat(pair.a.logText()).doesNotContain("KVS spool FENCED");
            assertThat(pair.b.logText()).doesNotContain("KVS spool FENCED");
            assertThat(pair.a.errorRepositorySize()).isZero();
            assertThat(pair.b.errorRepositorySize()).isZero();
        }
    }
}
