package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * A paused ("zombie") James: james-a queues mail (the sink holds every session, so it stays queued),
 * is frozen with SIGSTOP past its lease, james-b adopts its namespace and moves its mail, then james-a
 * resumes (SIGCONT). james-a must find itself fenced and stop: SMTP 4xx, {@code /healthcheck} 503; its
 * mail is delivered by james-b (lost 0); nothing reaches either error repository; duplicates at most
 * james-a's parallel deliveries (the sessions it held with the sink when frozen, finished on resume).
 * Then james-a is restarted: it takes its namespace back (james-b's adoption ends), accepts and
 * delivers mail again, and neither node is fenced.
 */
class ZombieOwnerIT {
    private static final int MAILS = Integer.getInteger("it.zombieMails", 200);
    private static final int SESSIONS = Integer.getInteger("it.faultSessions", 4);

    @Test
    void aFrozenOwnerThatResumesAfterAdoptionIsFencedAndLosesNothing() throws Exception {
        try (JamesPair pair = JamesPair.start("zombie-owner")) {
            List<String> accepted = pair.queueOnAWhileTheSinkHolds("zombie-a", SESSIONS, MAILS, Duration.ofSeconds(60 + MAILS / 10));

            pair.a.signal("STOP");
            Duration adoptionBound = Duration.ofMillis(JamesPair.LEASE_TIMEOUT_MILLIS).plusSeconds(120);
            long drained = JamesPair.awaitLog(pair.b, "adopted namespace james-a drained", adoptionBound);
            pair.a.signal("CONT");
            assertThat(drained).as("james-b adopted and moved james-a's queues\n%s", pair.diagnostics()).isPositive();

            // Resumed: its first write meets the higher epoch. New mail is refused with 4xx, never 250.
            int probe = pair.a.sendOne("<zombie-probe@it.test>");
            assertThat(probe).as("SMTP reply of the resumed, fenced james-a").isBetween(400, 499);
            assertThat(awaitStatus(pair.a, "/healthcheck", 503, Duration.ofSeconds(60)))
                .as("james-a's /healthcheck once fenced").isEqualTo(503);
            assertThat(pair.a.logText()).contains("KVS spool FENCED");

            pair.sink.holdAll(false);
            Scenario.Result result = Scenario.account("zombie-owner", pair.sink, accepted, List.of(), "");
            assertThat(result.lost()).as(result.line() + "\n" + pair.diagnostics()).isZero();
            // The duplicates are the mails james-a had started on when frozen: everything else it held was withheld.
            long withheld = pair.a.logText().lines().filter(l -> l.contains("read ahead before this node learned it is fenced: not processed")).count();
            Scenario.report("scenario=zombie-owner-in-flight duplicated=" + result.duplicated() + " withheldByTheZombie=" + withheld);
            assertThat(result.duplicated()).isLessThanOrEqualTo(JamesPair.IN_FLIGHT_DELIVERIES);
            assertThat(result.duplicated() + withheld).as("each mail james-a held: delivered by it, or withheld")
                .isGreaterThanOrEqualTo(MAILS - JamesPair.IN_FLIGHT_DELIVERIES);
            // james-a's error repository was adopted with its queues (its mail, none here, now in james-b's):
            // the fenced james-a cannot read it; it is checked again once james-a took it back.
            assertThat(pair.b.errorRepositorySize()).as("james-b's error repository").isZero();

            // Restarted, james-a takes its namespace back and works again.
            pair.a.stop();
            pair.a.startAgain();
            assertThat(JamesPair.awaitLog(pair.b, "adoption of namespace james-a ended", Duration.ofSeconds(60)))
                .as("james-b's adoption ended by the hand-over\n%s", pair.diagnostics()).isPositive();
            assertThat(pair.a.sendOne("<zombie-back@it.test>")).isEqualTo(250);
            assertThat(pair.sink.awaitAll(List.of("<zombie-back@it.test>"), Scenario.DELIVERY_TIMEOUT)).isEmpty();
            assertThat(pair.a.webadminStatus("/healthcheck")).isEqualTo(200);
            assertThat(pair.b.logText()).as("james-b never fenced on its own queues").doesNotContain("KVS spool FENCED");
            assertThat(pair.a.errorRepositorySize()).isZero();
            assertThat(pair.b.errorRepositorySize()).isZero();
        }
    }

    static int awaitStatus(JamesNode james, String path, int wanted, Duration timeout) throws Exception {
        Instant deadline = Instant.now().plus(timeout);
        int status = james.webadminStatus(path);
        while (status != wanted && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
            status = james.webadminStatus(path);
        }
        return status;
    }
}
