package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Fault (c): the store unreachable. A burst of mail is accepted, then, before James has relayed it,
 * the two nodes holding the spool queue are killed (2 of 3: no queue can have two copies), later the
 * third one too (all 3). While so, every SMTP transaction must be answered 4xx (never 250, never 5xx,
 * never a dropped session). Then the three nodes are restarted on their data: mail is accepted again,
 * and every mail ever answered 250 (the burst included) reaches the sink.
 *
 * <p>This test found that mail already answered 250 could end in the error repository while the
 * copies were restored (RemoteDelivery's enqueue into {@code outgoing} refused with TIMEOUT "a copy
 * was lost before answering", STORAGE_ERROR, or BAD_HANDLE during a reclaim). Enqueues into queues
 * other than the intake queue now retry with a replacing PUT of the same id until the mail is stored
 * or James stops ({@code acceptedMailRetryTimeout} is only the threshold past which the wait is
 * logged and the health check reports it); the intake queue still answers 4xx at once. The all-down phase runs by default
 * ({@code -Dit.killAll=false} leaves the third node up).
 */
class StoreUnreachableIT {
    private static final int FAULT_MAILS = Integer.getInteger("it.faultMails", 150);
    private static final int MIN_DOWN_TRANSACTIONS = 20;
    private static final long OUTAGE_MILLIS = Long.getLong("it.outageMillis", 4_000);
    private static final boolean KILL_ALL = Boolean.parseBoolean(System.getProperty("it.killAll", "true"));

    @Test
    void whileTheStoreIsUnreachableEveryTransactionGets4xxAndFlowResumesAfterwards() throws Exception {
        try (Cluster cluster = Cluster.start("store-unreachable")) {
            int port = cluster.james.smtpPort();
            List<String> accepted = new ArrayList<>();
            List<String> unknown = new ArrayList<>();

            // The burst is still in James when the store goes: the sink defers (451) meanwhile, so the mails
            // sit in the outgoing queue (RemoteDelivery retries after 1 s, 2 s, 5 s) or still in the spool.
            cluster.sink.deferAll(true);
            TrackingLoad burst = new TrackingLoad("it-before-outage", port, 8, FAULT_MAILS, 0, 60_000).start();
            burst.awaitDone(Duration.ofSeconds(120));
            accepted.addAll(burst.ids(TrackingLoad.Outcome.ACCEPTED));
            unknown.addAll(burst.ids(TrackingLoad.Outcome.UNKNOWN));
            assertThat(accepted).as(burst.summary()).hasSize(FAULT_MAILS);
            String queuesAtOutage = cluster.james.queuesSummary();

            List<String> spoolPair = cluster.pairOf("james/queue/spool@p5");
            for (String name : spoolPair) {
                cluster.node(name).kill9();
            }
            long deferred = cluster.sink.deferred();
            cluster.sink.deferAll(false);
            long deliveredBeforeOutage = accepted.stream().filter(id -> cluster.sink.count(id) > 0).count();
            TrackingLoad twoDown = outage(cluster, "it-down-2of3");
            TrackingLoad allDown = null;
            if (KILL_ALL) {
                for (KvsNode node : cluster.nodes) {
                    node.kill9(); // the last one (no-op for the two already down)
                }
                allDown = outage(cluster, "it-down-all");
            }
            String queuesDuringOutage = cluster.james.queuesSummary();

            for (KvsNode node : cluster.nodes) {
                if (!node.isRunning()) { // without it.killAll the third node never went down
                    node.startAgain();
                }
            }
            TrackingLoad restored = new TrackingLoad("it-restored", port, 4, 100 * FAULT_MAILS, 50, 60_000).start();
            boolean flowing = restored.awaitAccepted(FAULT_MAILS / 2, Duration.ofSeconds(120));
            restored.stop();
            accepted.addAll(restored.ids(TrackingLoad.Outcome.ACCEPTED));
            unknown.addAll(restored.ids(TrackingLoad.Outcome.UNKNOWN));

            List<String> refused = new ArrayList<>(twoDown.ids(TrackingLoad.Outcome.REFUSED));
            if (allDown != null) {
                refused.addAll(allDown.ids(TrackingLoad.Outcome.REFUSED));
            }
            String phases = "killedFirst=" + spoolPair + " deliveredBeforeOutage=" + deliveredBeforeOutage
                + " sinkDeferredBeforeOutage=" + deferred + " queuesAtOutage={" + queuesAtOutage.replace('\n', ' ') + "}"
                + " twoDown{" + twoDown.summary() + "} allDown{" + (allDown == null ? "skipped" : allDown.summary())
                + "} restored{" + restored.summary() + "}";
            assertThat(flowing).as("mail accepted again within 120 s of the restore: %s\n%s", phases, cluster.diagnostics()).isTrue();

            Scenario.Result result = Scenario.account("store-unreachable", cluster.sink, accepted, unknown, phases);
            long refusedDelivered = refused.stream().filter(id -> cluster.sink.count(id) > 0).count();
            int allDownTransactions = allDown == null ? 0 : allDown.outcomeCount();
            int allDownAccepted = allDown == null ? 0 : allDown.ids(TrackingLoad.Outcome.ACCEPTED).size();
            Scenario.report("scenario=store-unreachable-refusals transactions=" + (twoDown.outcomeCount() + allDownTransactions)
                + " refused4xx=" + refused.size() + " accepted250=" + (twoDown.ids(TrackingLoad.Outcome.ACCEPTED).size()
                + allDownAccepted) + " refusedButDelivered=" + refusedDelivered
                + " queuesDuringOutage=" + queuesDuringOutage.replace('\n', ' '));

            assertThat(twoDown.violations()).as("2 of 3 nodes down: replies that are not 4xx").isEmpty();
            assertThat(twoDown.ids(TrackingLoad.Outcome.REFUSED)).as(twoDown.summary())
                .hasSize(twoDown.outcomeCount()).hasSizeGreaterThanOrEqualTo(MIN_DOWN_TRANSACTIONS);
            if (allDown != null) {
                assertThat(allDown.violations()).as("all nodes down: replies that are not 4xx").isEmpty();
                assertThat(allDown.ids(TrackingLoad.Outcome.REFUSED)).as(allDown.summary())
                    .hasSize(allDown.outcomeCount()).hasSizeGreaterThanOrEqualTo(MIN_DOWN_TRANSACTIONS);
            }
            assertThat(result.lost()).as(result.line() + "\n" + cluster.diagnostics()).isZero();
        }
    }

    /**
     * SMTP load over 4 sessions for {@code it.outageMillis} (at least {@value #MIN_DOWN_TRANSACTIONS}
     * transactions) while the store is unreachable; each reply must be a 4xx.
     */
    private static TrackingLoad outage(Cluster cluster, String prefix) throws InterruptedException {
        TrackingLoad load = new TrackingLoad(prefix, cluster.james.smtpPort(), 4, 1_000_000, 100, 60_000);
        load.expectCodes(code -> code >= 400 && code < 500);
        load.start();
        Thread.sleep(OUTAGE_MILLIS);
        load.awaitOutcomes(MIN_DOWN_TRANSACTIONS, Duration.ofSeconds(120));
        load.stop();
        return load;
    }
}
