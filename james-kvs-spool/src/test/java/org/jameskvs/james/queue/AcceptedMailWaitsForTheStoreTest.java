package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.james.core.healthcheck.ResultStatus;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.awaitility.Awaitility;
import org.jameskvs.james.CapturedLog;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.health.KvsSpoolHealthCheck;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import ch.qos.logback.classic.Level;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The KVS server is down for longer than {@code acceptedMailRetryTimeout} (which used to be the
 * deadline after which accepted mail went to James's error processor): an enqueue of accepted mail
 * waits, is reported meanwhile (health check degraded), and completes once the server is back
 * (real server stopped and started again on its port and journal). The same for James's own
 * enqueues into the intake queue {@code spool} (only the handle an intake caller such as SMTP gets
 * fails fast), for the delete of a mail done, and for a queue created while the server is down.
 */
class AcceptedMailWaitsForTheStoreTest {
    private static final String PASSWORD = "waits-secret";
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private KvsServer server;
    private KvsClientOpener connection;
    private KvsMailQueueFactory factory;

    @AfterEach
    void stop() {
        if (factory != null) {
            factory.stop();
        }
        if (connection != null) {
            connection.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private int port;
    private KvsQueues queues;

    /** A stand-in for SMTP's SendMailHandler: listed in {@code intakeCallers}, it gets the intake handle. */
    static final class SmtpLikeCaller {
        static ManageableMailQueue spool(KvsMailQueueFactory factory) {
            return factory.createQueue(MailQueueFactory.SPOOL);
        }
    }

    private void start() throws Exception {
        server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
        port = server.port();
        Properties properties = new Properties();
        properties.setProperty("servers", "127.0.0.1:" + port);
        properties.setProperty("password", PASSWORD);
        properties.setProperty("requestTimeout", "2000");
        properties.setProperty("acceptedMailRetryTimeout", "500");
        properties.setProperty("idlePollInterval", "100");
        properties.setProperty("intakeCallers", SmtpLikeCaller.class.getName());
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(properties);
        connection = KvsClientOpener.connect(configuration);
        queues = new KvsQueues(connection, configuration);
        factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(), new RecordingMetricFactory(),
            new NoopGaugeRegistry());
    }

    private void stopServer() {
        server.close();
        server = null;
    }

    private void startServerAgain() throws Exception {
        server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD).withListenPort(port));
    }

    private static CompletableFuture<Void> enqueueAsync(MailQueue queue, String name) {
        return CompletableFuture.runAsync(() -> {
            try {
                queue.enQueue(Mails.defaultMail().name(name).build());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void jamesOwnEnqueueIntoTheSpoolWaitsForTheStoreWhileSmtpsFailsFast() throws Exception {
        start();
        ManageableMailQueue smtpSpool = SmtpLikeCaller.spool(factory);
        // The spooler, the mailet context (bounces, forwards), Requeue: any other James component.
        ManageableMailQueue jamesSpool = factory.createQueue(MailQueueFactory.SPOOL);
        assertThat(smtpSpool).isEqualTo(jamesSpool);

        stopServer();
        assertThatThrownBy(() -> smtpSpool.enQueue(Mails.defaultMail().name("smtp-while-down").build()))
            .as("SMTP's enqueue: a 4xx for the client, who keeps the mail")
            .isInstanceOf(MailQueue.MailQueueException.class);
        CompletableFuture<Void> requeued = enqueueAsync(jamesSpool, "requeued-while-down");
        Awaitility.await().atMost(WAIT).until(() -> factory.overdueEnqueues().count() == 1);
        assertThat(requeued).as("James's own enqueue of accepted mail: waiting, not failed").isNotDone();

        startServerAgain();
        requeued.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        MailQueue.MailQueueItem item = Flux.from(jamesSpool.deQueue()).blockFirst(WAIT);
        assertThat(item.getMail().getName()).isEqualTo("requeued-while-down");
        item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
        assertThat(jamesSpool.getSize()).isZero();
    }

    @Test
    void theDeleteOfAMailDoneWaitsForTheStoreInsteadOfFailingTheDone() throws Exception {
        start();
        ManageableMailQueue spool = factory.createQueue(MailQueueFactory.SPOOL);
        spool.enQueue(Mails.defaultMail().name("processed").build());
        MailQueue.MailQueueItem item = Flux.from(spool.deQueue()).blockFirst(WAIT);

        stopServer();
        // A done that failed would make the spooler re-enqueue the mail (processed twice), or reject it.
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            try {
                item.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);
            } catch (MailQueue.MailQueueException e) {
                throw new IllegalStateException(e);
            }
        });
        Awaitility.await().atMost(WAIT).until(() -> factory.overdueEnqueues().count() == 1);
        assertThat(done).isNotDone();

        startServerAgain();
        done.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(spool.getSize()).isZero();
        assertThat(factory.overdueEnqueues().count()).isZero();
    }

    @Test
    void aQueueCreatedWhileTheStoreIsDownIsUsableOnceItIsBack() throws Exception {
        start();
        stopServer();
        // RemoteDelivery or Requeue starting, or a new queue asked for, while the store cannot answer.
        ManageableMailQueue created = factory.createQueue(MailQueueName.of("created-while-down"));
        CompletableFuture<Void> accepted = enqueueAsync(created, "into-a-new-queue");
        Awaitility.await().atMost(WAIT).until(() -> factory.overdueEnqueues().count() == 1);
        assertThat(accepted).isNotDone();

        startServerAgain();
        accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        MailQueue.MailQueueItem item = Flux.from(created.deQueue()).blockFirst(WAIT);
        assertThat(item.getMail().getName()).isEqualTo("into-a-new-queue");
    }

    @Test
    void anAcceptedEnqueueWaitsForAStoreDownLongerThanTheOldTimeoutAndCompletesOnceItIsBack() throws Exception {
        start();
        KvsSpoolHealthCheck health = new KvsSpoolHealthCheck(queues, factory);
        ManageableMailQueue outgoing = factory.createQueue(MailQueueName.of("outgoing"));
        CapturedLog writesLog = CapturedLog.of(StoreWrites.class);

        server.close();
        server = null;
        CompletableFuture<Void> accepted = CompletableFuture.runAsync(() -> {
            try {
                outgoing.enQueue(Mails.defaultMail().name("accepted-while-down").build());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        Awaitility.await().atMost(WAIT).until(() -> factory.overdueEnqueues().count() == 1);
        assertThat(Mono.from(health.check()).block().getStatus()).isEqualTo(ResultStatus.DEGRADED);
        assertThat(accepted).as("still waiting past acceptedMailRetryTimeout, not failed").isNotDone();
        // The line follows the count (same thread, just after): wait for it too.
        Awaitility.await().atMost(WAIT).until(() -> !overdueWarnings(writesLog).isEmpty());

        startServerAgain();

        accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        writesLog.close();
        assertThat(overdueWarnings(writesLog)).as("WARN lines for the waiting write, all told: one").hasSize(1);
        assertThat(outgoing.getSize()).isEqualTo(1);
        MailQueue.MailQueueItem item = Flux.from(outgoing.deQueue()).blockFirst(WAIT);
        assertThat(item.getMail().getName()).isEqualTo("accepted-while-down");
        assertThat(factory.overdueEnqueues().count()).isZero();
        assertThat(Mono.from(health.check()).block().getStatus()).isEqualTo(ResultStatus.HEALTHY);
    }

    private static java.util.List<String> overdueWarnings(CapturedLog log) {
        return log.messages(Level.WARN, m -> m.contains("accepted mail accepted-while-down has waited"));
    }
}
