package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;

/**
 * Mail James took off a queue but had not started on when the node was fenced (as RemoteDelivery
 * keeps up to 256 waiting for its threads, and a paused node resumes with them): {@code getMail()}
 * refuses it ({@link FencedNodeHandsOutNoMail}), so only the queue's new writer delivers it; {@code done} still settles quietly and the
 * mail stays in the queue. Two real in-process KVS servers, replication on.
 */
class WithheldWhenFencedTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private TwoKvsNodes nodes;
    private KvsMailQueueFactory factory;

    @AfterEach
    void stop() {
        if (factory != null) {
            factory.stop();
        }
        if (nodes != null) {
            nodes.close();
        }
    }

    @Test
    void mailTakenButNotStartedIsWithheldOnceTheNodeIsFenced() throws Exception {
        nodes = new TwoKvsNodes();
        KvsSpoolConfiguration configuration = nodes.configuration("idlePollInterval", "100");
        ReplicatedKvsOpener james = (ReplicatedKvsOpener) nodes.connect(configuration, UnaryOperator.identity());
        KvsQueues queues = new KvsQueues(james, configuration);
        factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(), new RecordingMetricFactory(),
            new NoopGaugeRegistry());
        ManageableMailQueue spool = factory.createQueue(MailQueueFactory.SPOOL);
        spool.enQueue(Mails.defaultMail().name("started").build());
        spool.enQueue(Mails.defaultMail().name("waiting").build());
        List<MailQueue.MailQueueItem> taken = Flux.from(spool.deQueue()).take(2).collectList().block(WAIT);
        assertThat(taken.get(0).getMail().getName()).isEqualTo("started");

        ReplicatedKvsOpener other = (ReplicatedKvsOpener) nodes.connect(configuration, UnaryOperator.identity());
        KvsQueue otherSpool = other.takeOver(NodeIdentityGuard.leaseQueueOf(configuration.namespace()),
            OpenOptions.writer("other-node", 1)).get(WAIT.toSeconds(), TimeUnit.SECONDS).orThrow();
        // SMTP's handle fails at once on a fenced node (James's own enqueues wait until it stops: Enqueuer)
        assertThatThrownBy(() -> ((KvsMailQueue) spool).forIntake().enQueue(Mails.defaultMail().name("after-fence").build()))
            .hasMessageContaining("fenced");

        assertThatThrownBy(() -> taken.get(1).getMail()).isInstanceOf(FencedNodeHandsOutNoMail.class)
            .hasMessageContaining("fenced").hasMessageContaining("not processed");
        taken.get(1).done(MailQueue.MailQueueItem.CompletionStatus.RETRY);
        taken.get(0).done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
        assertThat(otherSpool.stat().join().size()).as("both mails stay for the new writer").isEqualTo(2);
    }
}
