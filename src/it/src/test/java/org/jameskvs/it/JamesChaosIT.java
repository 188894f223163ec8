package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * Faults in a row behind real James (the whole path: SMTP intake, spool, mailet processing,
 * RemoteDelivery to the sink, three KVS nodes with two copies of every queue): round after round a
 * node and a fault at random, kill -9 then restart on its journal, SIGSTOP then SIGCONT, SIGSTOP
 * then kill -9 and restart, or kill -9 and restart on an emptied disk, held 50 ms to 3 s, the next
 * round once 10-40 more mails were answered 250, so that a fault often comes while the last one's
 * copies are still being rebuilt. One node at a time; an emptied disk only once every queue's
 * replication record names two SYNC copies (kvs-admin list): a whole copy of each queue is then left
 * elsewhere. kvs-faults' {@code ChaosSoakTest} does the same under a writer of its own.
 *
 * <p>Asserted: every mail answered 250 reaches the sink (lost = 0); every reply is 250 or 4xx (no
 * 5xx, no broken session). Duplicates are counted, not asserted (a mail in delivery when its
 * queue's copy moved may go out twice). The seed ({@code -Dit.chaosSeed}) is printed first and
 * replays the faults, not the timing.
 */
class JamesChaosIT {
    private static final int ROUNDS = Integer.getInteger("it.chaosRounds", 8);
    private static final int SESSIONS = 4;
    private static final long PAUSE = 50;
    /** Bound of each wait for mail to be accepted again. */
    private static final Duration WAIT = Duration.ofSeconds(120);

    /** The faults, in the order the seed picks them. */
    private enum Fault {
        KILL, PAUSE, PAUSE_THEN_KILL, WIPE;

        void inject(KvsNode node) throws Exception {
            if (this == KILL || this == WIPE) {
                node.kill9();
            } else {
                node.pause();
            }
        }

        void heal(KvsNode node) throws Exception {
            switch (this) {
                case KILL -> node.startAgain();
                case PAUSE -> node.resume();
                case PAUSE_THEN_KILL -> {
                    node.kill9();
                    node.startAgain();
                }
                case WIPE -> {
                    node.wipeDisk();
                    node.startAgain();
                }
            }
        }

        /** Destroys the node's copies: only while no queue's copy is being rebuilt (else the copy being read from may be the last whole one). */
        boolean destroysCopies() {
            return this == WIPE;
        }
    }

    @Test
    void faultsInARowBehindJamesLoseNoAcceptedMail() throws Exception {
        long seed = Long.getLong("it.chaosSeed", System.currentTimeMillis());
        System.out.println("[james-chaos] seed " + seed + " (rerun the same faults: -Dit.chaosSeed=" + seed + ")");
        SplittableRandom random = new SplittableRandom(seed);
        try (Cluster cluster = Cluster.start("james-chaos")) {
            TrackingLoad load = new TrackingLoad("it-chaos", cluster.james.smtpPort(), SESSIONS, 1_000_000, PAUSE, 60_000);
            load.expectCodes(code -> code == 250 || (code >= 400 && code < 500));
            load.start();
            StringBuilder rounds = new StringBuilder();
            try {
                for (int round = 1; round <= ROUNDS; round++) {
                    KvsNode victim = cluster.nodes.get(random.nextInt(cluster.nodes.size()));
                    Fault fault = Fault.values()[random.nextInt(Fault.values().length)];
                    int before = 10 + random.nextInt(30);
                    long holdMillis = 50 + random.nextInt(3000);
                    int target = load.acceptedCount() + before;
                    assertThat(load.awaitAccepted(target, WAIT)).as("round %d: %d mails accepted before the fault: %s %s\n%s",
                        round, before, rounds, load.summary(), cluster.diagnostics()).isTrue();
                    if (fault.destroysCopies()) {
                        assertThat(everyQueueOnTwoSyncCopies(cluster, WAIT)).as("round %d: every queue on two SYNC copies before %s of %s\n%s",
                            round, fault, victim.name(), cluster.diagnostics()).isTrue();
                    }
                    int atFault = load.acceptedCount();
                    fault.inject(victim);
                    Thread.sleep(holdMillis);
                    int meanwhile = load.acceptedCount() - atFault;
                    fault.heal(victim);
                    String name = fault.name().toLowerCase();
                    rounds.append(' ').append(round).append(':').append(name).append('(').append(victim.name()).append(',')
                        .append(holdMillis).append("ms,").append(meanwhile).append("_accepted)");
                    System.out.println("[james-chaos] round " + round + ": " + name + " " + victim.name() + " for "
                        + holdMillis + " ms, " + meanwhile + " mails accepted meanwhile; " + load.summary());
                }
                int atEnd = load.acceptedCount();
                assertThat(load.awaitAccepted(atEnd + 50, WAIT)).as("mail accepted after the last round: %s %s\n%s",
                    rounds, load.summary(), cluster.diagnostics()).isTrue();
                load.stop();
                Scenario.Result result = Scenario.account("james-chaos", cluster.sink, load.ids(TrackingLoad.Outcome.ACCEPTED),
                    load.ids(TrackingLoad.Outcome.UNKNOWN), "seed=" + seed + " rounds=" + rounds.toString().trim().replace(' ', ';')
                        + " " + load.summary());
                assertThat(result.accepted()).as("mails answered 250").isGreaterThanOrEqualTo(ROUNDS * 10 + 50);
                assertThat(result.lost()).as(result.line() + "\n" + cluster.diagnostics()).isZero();
                assertThat(load.violations()).as("replies other than 250/4xx (5xx or a broken session)").isEmpty();
            } finally {
                load.stop();
            }
        }
    }

    /**
     * Waits (bounded) until the replication record of every queue of this James (kvs-admin list, as an
     * operator would look) names exactly two copies, both SYNC: no rebuild under way.
     */
    private static boolean everyQueueOnTwoSyncCopies(Cluster cluster, Duration max) throws Exception {
        Path conf = cluster.directory.resolve("james/conf");
        long deadline = System.nanoTime() + max.toNanos();
        do {
            Map<String, KvsAdminCli.Lease> leases = KvsAdminCli.leases(conf, "james/");
            if (!leases.isEmpty() && leases.values().stream().allMatch(l -> l.copies().size() == 2
                && l.copies().stream().allMatch(c -> c.endsWith(":SYNC")))) {
                return true;
            }
            Thread.sleep(500);
        } while (System.nanoTime() < deadline);
        return false;
    }
}
