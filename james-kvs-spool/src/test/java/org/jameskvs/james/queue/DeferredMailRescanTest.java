package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.mail.MessagingException;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;
import org.junit.jupiter.api.Test;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * The interleaving behind the audit's duplicates, played in order on two real KVS nodes: a rescan
 * (a delayed mail came due) is answered by the servers while a mail is in progress; before the
 * reader looks at the answer, RemoteDelivery defers that mail (enqueue with a delay, then SUCCESS:
 * its message is deleted). The answer still holds the deleted message; it must not be handed out again.
 */
class DeferredMailRescanTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aMailCompletedWhileARescanIsAnsweredIsNotHandedOutAgain() throws Exception {
        try (TwoKvsNodes nodes = new TwoKvsNodes()) {
            KvsSpoolConfiguration configuration = nodes.configuration("idlePollInterval", "1000");
            HeldRescan held = (HeldRescan) nodes.connect(configuration, HeldRescan::new);
            KvsQueues queues = new KvsQueues(held, configuration);
            KvsMailQueueFactory factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
                new RecordingMetricFactory(), new NoopGaugeRegistry());
            BlockingQueue<MailQueue.MailQueueItem> handedOut = new LinkedBlockingQueue<>();
            Disposable dequeuer = null;
            try (queues) {
                ManageableMailQueue outgoing = factory.createQueue(MailQueueName.of("outgoing"));
                outgoing.enQueue(Mails.defaultMail().name("deferred").build());
                dequeuer = Flux.from(outgoing.deQueue()).subscribe(handedOut::add);
                MailQueue.MailQueueItem deferred = next(handedOut);
                assertThat(deferred.getMail().getName()).isEqualTo("deferred");

                held.arm();
                outgoing.enQueue(Mails.defaultMail().name("due").build(), Duration.ofMillis(300));
                // "due" comes due: the reader rescans from position 0. The servers' answer holds
                // "deferred" (still stored: it is in progress); the reader does not have the answer yet.
                ReadResult rescan = held.answered().get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(rescan.messages()).extracting(DeferredMailRescanTest::mailName).contains("deferred");

                // RemoteDelivery defers "deferred": a new delayed copy, then the dequeued item completes.
                outgoing.enQueue(deferred.getMail(), Duration.ofHours(1));
                deferred.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
                held.letThrough();

                MailQueue.MailQueueItem second = next(handedOut);
                assertThat(second.getMail().getName()).as("the deleted message came back from the rescan").isEqualTo("due");
                // The parked copy of "deferred" and "due" (in progress): one copy each.
                assertThat(outgoing.getSize()).isEqualTo(2);
            } finally {
                if (dequeuer != null) {
                    dequeuer.dispose();
                }
                factory.stop();
            }
        }
    }

    private static String mailName(StoredMessage message) throws MessagingException {
        return MailCodec.decode(message.body(), "?").getName();
    }

    private static MailQueue.MailQueueItem next(BlockingQueue<MailQueue.MailQueueItem> handedOut) throws InterruptedException {
        MailQueue.MailQueueItem item = handedOut.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(item).as("a mail handed out within %s", WAIT).isNotNull();
        return item;
    }
}
