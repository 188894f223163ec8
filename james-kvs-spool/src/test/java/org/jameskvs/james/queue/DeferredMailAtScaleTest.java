package org.jameskvs.james.queue;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.assertj.core.api.SoftAssertions;
import org.awaitility.Awaitility;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.junit.jupiter.api.Test;

/**
 * The audit's scenario at the MailQueue level: thousands of mails in the outgoing queue on two real
 * KVS nodes, a RemoteDelivery-like deliverer ({@link DeferringDeliverer}: 256 in progress, deferral
 * = enqueue with a delay into the same queue, then SUCCESS) while the next hop is down, so every
 * mail is deferred several times with short delays (each coming due makes the reader rescan while
 * hundreds of mails are in progress), then parked; then the next hop comes back. Every mail must be
 * attempted exactly once per deferral, the queue must hold exactly one copy per mail, and every mail
 * must be delivered exactly once.
 *
 * <p>{@code -Ddeferred.mails=20000} runs the audit's size (default 3,000).
 */
class DeferredMailAtScaleTest {
    private static final int MAILS = Integer.getInteger("deferred.mails", 3_000);
    /** Three short deferrals (the reader rescans as each comes due), then parked until the flush. */
    private static final List<Duration> DELAYS = List.of(
        Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800), Duration.ofHours(1));
    private static final int ATTEMPTS_WHILE_DOWN = 4;

    @Test
    void deferredMailIsKeptOnceAndDeliveredOnceWhenTheNextHopComesBack() throws Exception {
        try (TwoKvsNodes nodes = new TwoKvsNodes()) {
            KvsSpoolConfiguration configuration = nodes.configuration("idlePollInterval", "1000");
            KvsQueues queues = new KvsQueues(nodes.connect(configuration, opener -> opener), configuration);
            KvsMailQueueFactory factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
                new RecordingMetricFactory(), new NoopGaugeRegistry());
            try (queues) {
                ManageableMailQueue outgoing = factory.createQueue(MailQueueName.of("outgoing"));
                runScenario(outgoing);
            } finally {
                factory.stop();
            }
        }
    }

    private static void runScenario(ManageableMailQueue outgoing) throws Exception {
        List<String> names = IntStream.range(0, MAILS).mapToObj(i -> "deferred-" + i).toList();
        // Soft: a drift while the hop is down is reported together with what it leads to once it is back.
        SoftAssertions softly = new SoftAssertions();
        try (DeferringDeliverer deliverer = new DeferringDeliverer(outgoing, DELAYS)) {
            for (String name : names) {
                outgoing.enQueue(Mails.defaultMail().name(name).build());
            }

            // The next hop is down: every mail deferred three times with short delays, then parked.
            Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(200))
                .until(() -> names.stream().allMatch(name -> deliverer.attemptsOf(name) >= ATTEMPTS_WHILE_DOWN)
                    && deliverer.inProgress() == 0);
            long attemptsWhileDown = deliverer.attempts();
            long sizeWhileParked = outgoing.getSize();
            System.out.printf("DeferredMailAtScaleTest: %d mails, next hop down: %d attempts (expected %d), "
                + "queue size %d%n", MAILS, attemptsWhileDown, (long) MAILS * ATTEMPTS_WHILE_DOWN, sizeWhileParked);
            softly.assertThat(deliverer.failures()).isEmpty();
            softly.assertThat(attemptsWhileDown).as("a deferred mail handed out twice").isEqualTo((long) MAILS * ATTEMPTS_WHILE_DOWN);
            softly.assertThat(sizeWhileParked).as("copies of the parked mails in the queue").isEqualTo(MAILS);

            // The next hop is back (and the parked mail due now).
            deliverer.hopUp(true);
            outgoing.flush();
            Awaitility.await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(200))
                .until(() -> deliverer.distinctDelivered() == MAILS && deliverer.inProgress() == 0
                    && outgoing.getSize() == 0);
            // The queue is empty and nothing is in progress: no further delivery can come.
            System.out.printf("DeferredMailAtScaleTest: next hop back: %d deliveries of %d mails, %d delivered twice%n",
                deliverer.deliveries(), MAILS, deliverer.deliveredTwice().size());
            softly.assertThat(deliverer.failures()).isEmpty();
            softly.assertThat(deliverer.deliveredTwice()).isEmpty();
            softly.assertThat(deliverer.deliveries()).isEqualTo(MAILS);
        }
        softly.assertAll();
    }
}
