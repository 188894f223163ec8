package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.james.core.healthcheck.ResultStatus;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailPrioritySupport;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.awaitility.Awaitility;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.health.KvsSpoolHealthCheck;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** What the brief asks beyond James's contracts: bounded read-ahead, no head-of-line blocking, refusals, handles, restarts. */
class KvsMailQueueBehaviourTest {
    private static final MailQueueName SPOOL = MailQueueName.of("spool");
    private final RecordingKvs kvs = new RecordingKvs();
    private final List<KvsMailQueueFactory> factories = new ArrayList<>();

    private KvsMailQueueFactory factory(String... settings) {
        Properties properties = new Properties();
        properties.setProperty("idlePollInterval", "100");
        for (int i = 0; i + 1 < settings.length; i += 2) {
            properties.setProperty(settings[i], settings[i + 1]);
        }
        KvsMailQueueFactory factory = new KvsMailQueueFactory(new KvsQueues(kvs, KvsSpoolConfiguration.from(properties)),
            new RawMailQueueItemDecoratorFactory(), new RecordingMetricFactory(), new NoopGaugeRegistry());
        factories.add(factory);
        return factory;
    }

    @AfterEach
    void stop() {
        factories.forEach(KvsMailQueueFactory::stop);
    }

    private static void enqueue(MailQueue queue, int count, String prefix) throws Exception {
        for (int i = 0; i < count; i++) {
            queue.enQueue(Mails.defaultMail().name(prefix + i).build());
        }
    }

    @Test
    void readAheadIsBoundedWhateverTheBacklog() throws Exception {
        ManageableMailQueue queue = factory("readAheadWindow", "16", "readBlockSize", "8").createQueue(SPOOL);
        enqueue(queue, 2000, "m");

        List<MailQueue.MailQueueItem> taken = Flux.from(queue.deQueue()).limitRate(1).take(3).collectList().block(Duration.ofSeconds(10));

        assertThat(taken).extracting(item -> item.getMail().getName()).containsExactly("m0", "m1", "m2");
        Thread.sleep(300);
        assertThat(kvs.messagesRead.get()).isLessThanOrEqualTo(16 + 3);
        assertThat(queue.getSize()).isEqualTo(2000);
    }

    @Test
    void delayedMailAtTheHeadDoesNotDelayReadyMail() throws Exception {
        ManageableMailQueue queue = factory("readBlockSize", "8").createQueue(SPOOL);
        for (int i = 0; i < 500; i++) {
            queue.enQueue(Mails.defaultMail().name("later" + i).build(), 1, TimeUnit.HOURS);
        }
        queue.enQueue(Mails.defaultMail().name("ready").build());

        MailQueue.MailQueueItem item = Flux.from(queue.deQueue()).blockFirst(Duration.ofSeconds(5));

        assertThat(item.getMail().getName()).isEqualTo("ready");
        assertThat(kvs.messagesRead.get()).isEqualTo(1);
    }

    @Test
    void refusedPutFailsTheIntakeEnqueue() throws Exception {
        // The handle SMTP's SendMailHandler (an intake caller) gets: its client keeps the mail on a 4xx.
        ManageableMailQueue queue = factory().createQueue(SPOOL).forIntake();
        kvs.refusePuts.set(Status.DISK_FULL);

        assertThatThrownBy(() -> queue.enQueue(Mails.defaultMail().name("lost?").build()))
            .isInstanceOf(MailQueue.MailQueueException.class)
            .hasMessageContaining("DISK_FULL");
        assertThatThrownBy(() -> Mono.from(queue.enqueueReactive(Mails.defaultMail().name("lost?").build())).block())
            .hasCauseInstanceOf(MailQueue.MailQueueException.class);
        assertThat(queue.getSize()).isZero();
    }

    @Test
    void anEnqueueOfAcceptedMailRidesOutARefusingStore() throws Exception {
        ManageableMailQueue outgoing = factory().createQueue(MailQueueName.of("outgoing"));
        kvs.refusePuts.set(Status.STORAGE_ERROR);
        java.util.concurrent.CompletableFuture<Void> enqueue = java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                outgoing.enQueue(Mails.defaultMail().name("accepted").build());
            } catch (javax.mail.MessagingException e) {
                throw new IllegalStateException(e);
            }
        });
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> kvs.refusedPuts.get() >= 3);
        assertThat(enqueue).isNotDone();

        kvs.refusePuts.set(null); // the store is back

        enqueue.get(10, TimeUnit.SECONDS);
        assertThat(outgoing.getSize()).isEqualTo(1);
        MailQueue.MailQueueItem item = Flux.from(outgoing.deQueue()).blockFirst(Duration.ofSeconds(5));
        assertThat(item.getMail().getName()).isEqualTo("accepted");
    }

    @Test
    void anEnqueueOfAcceptedMailWaitsPastTheAlertThresholdAndIsReportedMeanwhile() throws Exception {
        KvsMailQueueFactory factory = factory("acceptedMailRetryTimeout", "300");
        ManageableMailQueue outgoing = factory.createQueue(MailQueueName.of("outgoing"));
        KvsSpoolHealthCheck health = new KvsSpoolHealthCheck(new Fencing(KvsSpoolConfiguration.defaults()), factory.overdueEnqueues());
        kvs.refusePuts.set(Status.STORAGE_ERROR);
        CompletableFuture<Void> enqueue = enqueueInBackground(outgoing, "waits");

        // Past the threshold (the old deadline): still waiting, logged and reported, not failed.
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> factory.overdueEnqueues().count() == 1);
        assertThat(Mono.from(health.check()).block().getStatus()).isEqualTo(ResultStatus.DEGRADED);
        long refusedSoFar = kvs.refusedPuts.get();
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> kvs.refusedPuts.get() > refusedSoFar + 2);
        assertThat(enqueue).isNotDone();

        kvs.refusePuts.set(null); // the store is back

        enqueue.get(20, TimeUnit.SECONDS);
        assertThat(outgoing.getSize()).isEqualTo(1);
        assertThat(factory.overdueEnqueues().count()).isZero();
        assertThat(Mono.from(health.check()).block().getStatus()).isEqualTo(ResultStatus.HEALTHY);
    }

    @Test
    void anEnqueueOfAcceptedMailIntoAQueueThatCannotBeCreatedYetIsRetried() throws Exception {
        ManageableMailQueue outgoing = factory().createQueue(MailQueueName.of("outgoing"));
        // A new priority level is a KVS queue opened (created) at its first mail.
        kvs.refuseOpens.set(Status.TIMEOUT);
        CompletableFuture<Void> enqueue = enqueueInBackground(outgoing, Mails.defaultMail().name("urgent")
            .attribute(MailPrioritySupport.HIGH_PRIORITY_ATTRIBUTE).build());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> kvs.refusedOpens.get() >= 3);
        assertThat(enqueue).isNotDone();

        kvs.refuseOpens.set(null);

        enqueue.get(10, TimeUnit.SECONDS);
        assertThat(outgoing.getSize()).isEqualTo(1);
        assertThat(Flux.from(outgoing.deQueue()).blockFirst(Duration.ofSeconds(5)).getMail().getName()).isEqualTo("urgent");
    }

    @Test
    void anEnqueueOfAcceptedMailStillWaitingWhenJamesStopsLeavesTheMailWhereItIs() throws Exception {
        KvsMailQueueFactory factory = factory();
        ManageableMailQueue outgoing = factory.createQueue(MailQueueName.of("outgoing"));
        kvs.refusePuts.set(Status.STORAGE_ERROR);
        CompletableFuture<Void> enqueue = enqueueInBackground(outgoing, "at-shutdown");
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> kvs.refusedPuts.get() >= 2);

        factory.stop();

        // Not a MailQueueException (James would send the mail to its error processor): an Error James lets through.
        assertThatThrownBy(() -> enqueue.get(10, TimeUnit.SECONDS))
            .hasCauseInstanceOf(EnqueueAbandonedAtShutdown.class);
        long attempts = kvs.refusedPuts.get();
        kvs.refusePuts.set(null);
        assertThat(outgoing.getSize()).isZero();
        assertThat(kvs.refusedPuts.get()).as("no retry after the stop").isEqualTo(attempts);
    }

    @Test
    void aMailTheStoreRefusesForItselfFailsAtOnceEvenWhenAccepted() throws Exception {
        ManageableMailQueue outgoing = factory().createQueue(MailQueueName.of("outgoing"));
        kvs.refusePuts.set(Status.FRAME_TOO_LARGE);

        assertThatThrownBy(() -> outgoing.enQueue(Mails.defaultMail().name("too-big").build()))
            .isInstanceOf(MailQueue.MailQueueException.class)
            .hasMessageContaining("FRAME_TOO_LARGE");
        assertThat(kvs.refusedPuts.get()).isEqualTo(1);
    }

    private static CompletableFuture<Void> enqueueInBackground(MailQueue queue, String name) throws Exception {
        return enqueueInBackground(queue, Mails.defaultMail().name(name).build());
    }

    private static CompletableFuture<Void> enqueueInBackground(MailQueue queue, org.apache.mailet.Mail mail) {
        return CompletableFuture.runAsync(() -> {
            try {
                queue.enQueue(mail);
            } catch (javax.mail.MessagingException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void closingAHandleDoesNotStopTheQueue() throws Exception {
        KvsMailQueueFactory factory = factory();
        ManageableMailQueue spooler = factory.createQueue(SPOOL);
        factory.getQueue(SPOOL).orElseThrow().close();

        enqueue(spooler, 1, "after-close");

        assertThat(Flux.from(spooler.deQueue()).blockFirst(Duration.ofSeconds(5)).getMail().getName()).isEqualTo("after-close0");
    }

    @Test
    void concurrentDequeuersShareTheMailWithoutDuplicates() throws Exception {
        ManageableMailQueue queue = factory().createQueue(SPOOL);
        enqueue(queue, 300, "c");
        Set<String> seen = ConcurrentHashMap.newKeySet();
        List<String> duplicates = new ArrayList<>();
        for (int d = 0; d < 4; d++) {
            Flux.from(queue.deQueue()).subscribe(item -> {
                if (!seen.add(item.getMail().getName())) {
                    synchronized (duplicates) {
                        duplicates.add(item.getMail().getName());
                    }
                }
                try {
                    item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
                } catch (MailQueue.MailQueueException e) {
                    throw new IllegalStateException(e);
                }
            });
        }

        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 300);
        assertThat(duplicates).isEmpty();
        Awaitility.await().untilAsserted(() -> assertThat(queue.getSize()).isZero());
    }

    @Test
    void mailIsNotStrandedWhenTheCopyServingReadsChanges() throws Exception {
        ManageableMailQueue queue = factory().createQueue(SPOOL);
        enqueue(queue, 10, "before");
        List<String> first = new ArrayList<>();
        Flux.from(queue.deQueue()).take(10).doOnNext(item -> {
            first.add(item.getMail().getName());
            try {
                item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
            } catch (MailQueue.MailQueueException e) {
                throw new IllegalStateException(e);
            }
        }).blockLast(Duration.ofSeconds(10));
        assertThat(first).hasSize(10);

        // The new read copy numbers what is left from 0: the reader's cursor (10) is past all of it.
        kvs.switchReadCopy(10);
        enqueue(queue, 5, "after");

        List<String> names = Flux.from(queue.deQueue()).take(5).map(item -> item.getMail().getName())
            .collectList().block(Duration.ofSeconds(10));
        assertThat(names).containsExactly("after0", "after1", "after2", "after3", "after4");
    }

    @Test
    void aRestartedNodeFindsItsQueuesAndRedeliversUnfinishedMail() throws Exception {
        KvsMailQueueFactory before = factory();
        ManageableMailQueue queue = before.createQueue(MailQueueName.of("outgoing"));
        enqueue(queue, 2, "r");
        MailQueue.MailQueueItem unfinished = Flux.from(queue.deQueue()).blockFirst(Duration.ofSeconds(5));
        assertThat(unfinished.getMail().getName()).isEqualTo("r0");
        before.stop();

        KvsMailQueueFactory after = factory();

        assertThat(after.listCreatedMailQueues()).contains(MailQueueName.of("outgoing"));
        ManageableMailQueue again = after.getQueue(MailQueueName.of("outgoing")).orElseThrow();
        assertThat(again.getSize()).isEqualTo(2);
        List<String> names = Flux.from(again.deQueue()).take(2).map(item -> item.getMail().getName())
            .collectList().block(Duration.ofSeconds(5));
        assertThat(names).containsExactly("r0", "r1");
    }

    @Test
    void browseShowsDelayedMailWithItsNextDeliveryAndFlushCountsIt() throws Exception {
        ManageableMailQueue queue = factory().createQueue(SPOOL);
        queue.enQueue(Mails.defaultMail().name("now").build());
        queue.enQueue(Mails.defaultMail().name("later").build(), 1, TimeUnit.HOURS);

        List<ManageableMailQueue.MailQueueItemView> views = new ArrayList<>();
        queue.browse().forEachRemaining(views::add);

        assertThat(views).extracting(view -> view.getMail().getName()).containsExactly("now", "later");
        assertThat(views.get(0).getNextDelivery()).isEmpty();
        assertThat(views.get(1).getNextDelivery()).isPresent();
        assertThat(queue.flush()).isEqualTo(1);
        assertThat(Flux.from(queue.deQueue()).take(2).map(item -> item.getMail().getName())
            .collectList().block(Duration.ofSeconds(5))).containsExactly("now", "later");
    }

    @Test
    void retriedMailKeepsWhatTheProcessorChanged() throws Exception {
        ManageableMailQueue queue = factory().createQueue(SPOOL);
        enqueue(queue, 1, "retry");
        java.util.Iterator<MailQueue.MailQueueItem> items = Flux.from(queue.deQueue()).toIterable().iterator();
        MailQueue.MailQueueItem first = items.next();
        first.getMail().setAttribute(org.apache.mailet.Attribute.convertToAttribute("errorCount", 1));
        first.done(MailQueue.MailQueueItem.CompletionStatus.RETRY);

        MailQueue.MailQueueItem second = items.next();

        assertThat(second.getMail().getAttribute(org.apache.mailet.AttributeName.of("errorCount")))
            .contains(org.apache.mailet.Attribute.convertToAttribute("errorCount", 1));
        assertThat(queue.getSize()).isEqualTo(1);
    }

    @Test
    void dueMailInFlightDoesNotHideTheNextDelayedMail() throws Exception {
        ManageableMailQueue queue = factory("idlePollInterval", "300").createQueue(SPOOL);
        queue.enQueue(Mails.defaultMail().name("first").build(), Duration.ofMillis(200));
        queue.enQueue(Mails.defaultMail().name("second").build(), Duration.ofMillis(1200));
        List<String> names = new java.util.concurrent.CopyOnWriteArrayList<>();
        long start = System.currentTimeMillis();
        // "first" is never done: it stays in flight with its (past) notBefore, the smallest STAT reports.
        Flux.from(queue.deQueue()).subscribe(item -> names.add(item.getMail().getName()));

        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> names.size() == 2);

        assertThat(names).containsExactly("first", "second");
        // "second" was not handed out before its delay (how soon after depends on the machine: not asserted).
        assertThat(System.currentTimeMillis() - start).isGreaterThanOrEqualTo(1000L);
    }
}
