package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.WebAdmin;

import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.Test;

/**
 * The audit of issue 12, end to end: two real KVS server processes, a real James 3.8.1 with the
 * plug-in, the next hop (the sink) down while thousands of mails arrive, so RemoteDelivery defers
 * every one of them (twice with short delays, each coming due making the queue's reader rescan
 * while hundreds of mails are in progress, then parked for an hour); then the next hop comes back
 * and the parked mail is flushed. The outgoing queue must hold exactly one copy per mail while
 * they are parked, and every mail must reach the next hop exactly once.
 *
 * <p>{@code -Ddeferred.e2e.mails=20000} runs the audit's size (default 2,000).
 */
class DeferredMailE2ETest {
    private static final int MAILS = Integer.getInteger("deferred.e2e.mails", 2_000);
    private static final String RECIPIENT = "rcpt@sink.test";
    /** Attempts while the next hop is down: the first, then after 500 ms and 1 s; the third retry waits an hour. */
    private static final int ATTEMPTS_WHILE_DOWN = 3;
    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    @Test
    void deferredMailIsKeptOnceAndDeliveredOnceWhenTheNextHopComesBack() throws Exception {
        try (ReplicatedJames rig = ReplicatedJames.start("deferred", conf -> conf.remoteDeliveryDelays("500, 1000, 3 * 3600000"))) {
            SmtpSink sink = rig.sink;
            JamesProcess james = rig.james;
            WebAdmin webAdmin = new WebAdmin(james.webadminPort());
            List<String> ids = IntStream.range(0, MAILS).mapToObj(i -> SmtpLoadSender.messageId("e2e-parked", i)).toList();

            sink.deferAll(true);
            SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
                .send(MAILS, 8, RECIPIENT, "e2e-parked");
            assertThat(sent.accepted()).as(sent.summary()).isEqualTo(MAILS);

            // Parked: every attempt made, nothing in the spool, nothing ready or in progress in outgoing.
            Instant deadline = Instant.now().plus(TIMEOUT);
            while (!(sink.deferred() >= (long) MAILS * ATTEMPTS_WHILE_DOWN && webAdmin.queueSize("spool") == 0
                && nothingReadyOrInProgress(webAdmin)) && Instant.now().isBefore(deadline)) {
                Thread.sleep(500);
            }
            long parked = webAdmin.queueSize("outgoing");
            long attemptsWhileDown = sink.deferred();
            System.out.printf("DeferredMailE2ETest: %d mails, next hop down: %d attempts (expected %d), outgoing size %d%n",
                MAILS, attemptsWhileDown, (long) MAILS * ATTEMPTS_WHILE_DOWN, parked);
            assertThat(attemptsWhileDown).as("attempts while the next hop was down\n%s", james.logTail(40))
                .isGreaterThanOrEqualTo((long) MAILS * ATTEMPTS_WHILE_DOWN);

            sink.deferAll(false);
            webAdmin.patch("/mailQueues/outgoing/mails?delayed=true", "{\"delayed\":false}");
            List<String> missing = sink.awaitAll(ids, TIMEOUT);
            // Settled: nothing stored in either queue (a mail stays stored until its delivery is done, so a
            // second stored copy would show), and every delivery attempt the sink saw has ended in James
            // (RemoteDelivery's trial count, published after the attempt's done), every copy ever stored in
            // outgoing done. A duplicate handed out from the store would have been received by the sink
            // before its attempt ended; none can be stored any more.
            Settled settled = null;
            deadline = Instant.now().plus(TIMEOUT);
            while (Instant.now().isBefore(deadline)) {
                settled = Settled.read(webAdmin, sink);
                if (settled.done()) {
                    break;
                }
                Thread.sleep(500);
            }
            System.out.printf("DeferredMailE2ETest: next hop back: %s, %s%n", sink.statsLine(), settled);

            assertThat(missing).as("accepted (250) but never delivered: %s\n%s", sink.statsLine(), james.logTail(40)).isEmpty();
            assertThat(settled.done()).as("queues empty and every delivery attempt ended: %s\n%s", settled, james.logTail(40)).isTrue();
            assertThat(attemptsWhileDown).as("a deferred mail handed out twice").isEqualTo((long) MAILS * ATTEMPTS_WHILE_DOWN);
            assertThat(parked).as("copies of the parked mails in the outgoing queue").isEqualTo(MAILS);
            assertThat(sink.duplicates()).as(sink.statsLine()).isZero();
            assertThat(sink.messages()).isEqualTo(MAILS);
            // Every mail handed out once per attempt: three while the next hop was down, one after.
            assertThat(settled.trials).as("RemoteDelivery attempts: %s", settled).isEqualTo((long) MAILS * (ATTEMPTS_WHILE_DOWN + 1));
            assertThat(settled.dequeued).as("outgoing dequeues (done) against its enqueues: %s", settled).isEqualTo(settled.enqueued);
            assertThat(settled.enqueued).as("outgoing enqueues: the spool's one, then one per deferral: %s", settled)
                .isEqualTo((long) MAILS * (ATTEMPTS_WHILE_DOWN + 1));
        }
    }

    /**
     * One look at whether delivery has settled: queue sizes (webadmin), and from James's metrics
     * RemoteDelivery's ended attempts ({@code RemoteDeliveryTrial}, published after the attempt's
     * {@code done}), outgoing's enqueues and dequeues (done), against the sink's transactions.
     */
    private record Settled(long spool, long outgoing, long trials, long enqueued, long dequeued, long sinkTransactions) {
        static Settled read(WebAdmin webAdmin, SmtpSink sink) throws Exception {
            long transactions = sink.deferred() + sink.messages(); // before the metrics: any attempt counted here has started
            long spool = webAdmin.queueSize("spool");
            long outgoing = webAdmin.queueSize("outgoing");
            String metrics = webAdmin.get("/metrics");
            return new Settled(spool, outgoing, metric(metrics, "RemoteDeliveryTrial_count"), metric(metrics, "enqueuedMail:outgoing_total"),
                metric(metrics, "dequeuedMail:outgoing_total"), transactions);
        }

        boolean done() {
            return spool == 0 && outgoing == 0 && trials >= sinkTransactions && dequeued >= enqueued;
        }

        private static long metric(String metrics, String name) {
            java.util.regex.Matcher value = java.util.regex.Pattern
                .compile("(?m)^" + java.util.regex.Pattern.quote(name) + "\\s+([0-9.eE+-]+)\\s*$").matcher(metrics);
            if (!value.find()) {
                throw new AssertionError("no metric " + name + " in James's /metrics: " + metrics.lines()
                    .filter(l -> l.startsWith("RemoteDelivery") || l.contains("queuedMail:")).toList());
            }
            return (long) Double.parseDouble(value.group(1));
        }
    }

    /** No mail in outgoing whose next delivery has come (ready, or in progress in RemoteDelivery). */
    private static boolean nothingReadyOrInProgress(WebAdmin webAdmin) throws Exception {
        // webadmin applies the limit before the delayed filter: the limit must cover the whole queue.
        return webAdmin.get("/mailQueues/outgoing/mails?delayed=false&limit=" + (4 * MAILS)).strip().equals("[]");
    }
}
