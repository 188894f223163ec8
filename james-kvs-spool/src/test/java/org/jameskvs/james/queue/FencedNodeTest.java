package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import javax.mail.MessagingException;

import org.apache.james.core.healthcheck.Result;
import org.apache.james.core.healthcheck.ResultStatus;
import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.apache.mailet.Mail;
import org.awaitility.Awaitility;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.james.CapturedLog;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.health.KvsSpoolHealthCheck;
import org.jameskvs.james.repository.KvsMailRepository;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import ch.qos.logback.classic.Level;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A James node whose queues a second writer takes over at a higher epoch (real KVS servers, real
 * client connections): the node stops taking mail in (the intake enqueue fails: SMTP 4xx) and
 * handing mail out, says so once, reports it through its health check, and never fails anything
 * into James's error path: mail already accepted waits in place, a done mail is left to the other
 * writer, and the mail stays in the KVS queues for it.
 */
class FencedNodeTest {
    private static final String PASSWORD = "fenced-secret";
    private static final MailQueueName OUTGOING = MailQueueName.of("outgoing");
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private KvsServer server;
    private TwoKvsNodes nodes;
    private KvsClientOpener jamesConnection;
    private KvsClientOpener otherConnection;
    private KvsMailQueueFactory factory;
    private final CapturedLog fencingLog = CapturedLog.of(Fencing.class);
    private final CapturedLog enqueuerLog = CapturedLog.of(StoreWrites.class);
    private final CapturedLog readerLog = CapturedLog.of(MailQueueReader.class);

    @AfterEach
    void stop() throws Exception {
        if (factory != null) {
            factory.stop();
        }
        if (jamesConnection != null) {
            jamesConnection.close();
        }
        if (otherConnection != null) {
            otherConnection.close();
        }
        if (server != null) {
            server.close();
        }
        if (nodes != null) {
            nodes.close();
        }
        fencingLog.close();
        enqueuerLog.close();
        readerLog.close();
    }

    @Test
    void aNodeFencedByASecondWriterStopsAndLeavesItsMailToThatWriter() throws Exception {
        KvsSpoolConfiguration configuration = startServerAndJamesConnection();
        JamesQueues node = jamesQueues(jamesConnection, configuration);
        ManageableMailQueue spool = node.spool();
        spool.enQueue(mail("in-progress"));
        spool.enQueue(mail("read-ahead"));
        spool.enQueue(mail("waiting"));
        // Two handed out: James started the first; the second waits in James (read ahead) when the fence comes.
        List<MailQueue.MailQueueItem> handed = Flux.from(spool.deQueue()).take(2).collectList().block(WAIT);
        MailQueue.MailQueueItem inProgress = handed.get(0);
        MailQueue.MailQueueItem readAhead = handed.get(1);
        assertThat(inProgress.getMail().getName()).isEqualTo("in-progress");
        assertThat(result(node.health()).getStatus()).isEqualTo(ResultStatus.HEALTHY);

        // Another process opens this node's queues at a higher epoch.
        otherConnection = KvsClientOpener.connect(configuration);
        KvsQueue otherSpool = otherConnection.open(level(configuration, "spool"), OpenOptions.writer("other-node", 2)).join().orThrow();
        otherConnection.open(level(configuration, "outgoing"), OpenOptions.writer("other-node", 2)).join().orThrow();

        assertThatIntakeStopsAndIsReported(spool, node.health(), "james/queue/spool@p" + MailPriority.NORMAL);
        // The mail read ahead before the fence was known is not processed here: James's first getMail refuses.
        assertThatThrownBy(readAhead::getMail).isInstanceOf(FencedNodeHandsOutNoMail.class)
            .hasMessageContaining("read-ahead").hasMessageContaining("fenced");
        assertThatNothingReachesAnErrorPath(spool, node.outgoing(), inProgress);
        // Every mail is still in the queue, for the writer that holds it now.
        assertThat(otherSpool.stat().join().size()).isEqualTo(3);
        assertThat(node.outgoing().getSize()).isZero();
    }

    @Test
    void aReplicatedNodeWhoseQueueIsTakenOverStopsTheSameWay() throws Exception {
        nodes = new TwoKvsNodes();
        KvsSpoolConfiguration configuration = nodes.configuration("idlePollInterval", "100");
        KvsQueueOpener james = nodes.connect(configuration, UnaryOperator.identity());
        JamesQueues node = jamesQueues(james, configuration);
        ManageableMailQueue spool = node.spool();
        spool.enQueue(mail("in-progress"));
        spool.enQueue(mail("waiting"));
        MailQueue.MailQueueItem inProgress = Flux.from(spool.deQueue()).blockFirst(WAIT);
        assertThat(inProgress.getMail().getName()).isEqualTo("in-progress");

        // An administrator (or a lease watcher) on another James node takes the spool over.
        ReplicatedKvsOpener other = (ReplicatedKvsOpener) nodes.connect(configuration, UnaryOperator.identity());
        KvsQueue otherSpool = other.takeOver(level(configuration, "spool"), OpenOptions.writer("other-node", 1))
            .get(WAIT.toSeconds(), TimeUnit.SECONDS).orThrow();

        assertThatIntakeStopsAndIsReported(spool, node.health(), "james/queue/spool@p" + MailPriority.NORMAL);
        assertThatNothingReachesAnErrorPath(spool, node.outgoing(), inProgress);
        assertThat(otherSpool.stat().join().size()).as("both mails, on the new owner's copies").isEqualTo(2);
    }

    private void assertThatIntakeStopsAndIsReported(ManageableMailQueue queue, KvsSpoolHealthCheck health, String kvsQueue) {
        MailQueue spool = ((KvsMailQueue) queue).forIntake(); // the handle SMTP's SendMailHandler gets
        assertThatThrownBy(() -> spool.enQueue(mail("after-fence")))
            .isInstanceOf(MailQueue.MailQueueException.class)
            .hasMessageContaining("fenced");
        Result result = result(health);
        assertThat(result.getStatus()).isEqualTo(ResultStatus.UNHEALTHY);
        assertThat(result.getCause()).hasValueSatisfying(cause -> assertThat(cause)
            .contains(kvsQueue, "another writer holds it", "ownerName=james", "namespace=james", "epoch="));
        assertThatThrownBy(() -> spool.enQueue(mail("again")))
            .isInstanceOf(MailQueue.MailQueueException.class)
            .hasMessageContaining("fenced");
        List<String> alerts = fencingLog.messages(Level.ERROR);
        assertThat(alerts).as("one alert, however many refusals").hasSize(1);
        assertThat(alerts.get(0)).contains("FENCED", kvsQueue, "ownerName=james", "namespace=james").containsPattern("epoch=\\d+");
    }

    private void assertThatNothingReachesAnErrorPath(ManageableMailQueue spool, ManageableMailQueue outgoing,
                                                     MailQueue.MailQueueItem inProgress) throws Exception {
        // Accepted mail (as RemoteDelivery enqueues into outgoing): neither stored nor failed, it waits.
        CompletableFuture<Void> accepted = CompletableFuture.runAsync(() -> {
            try {
                outgoing.enQueue(mail("accepted"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Awaitility.await().atMost(WAIT).until(() -> !enqueuerLog.messages(Level.INFO,
            message -> message.contains("mail accepted not enqueued: this James node is fenced")).isEmpty());
        assertThat(accepted).isNotDone();

        // The mail being processed when the other writer came: done succeeds, nothing to handle for James.
        inProgress.done(MailQueue.MailQueueItem.CompletionStatus.SUCCESS);

        // No more mail handed out ("waiting" is there, ready).
        List<String> handedOut = new CopyOnWriteArrayList<>();
        Flux.from(spool.deQueue()).subscribe(item -> handedOut.add(item.getMail().getName()));
        Awaitility.await().atMost(WAIT).until(() -> !readerLog.messages(Level.WARN,
            message -> message.contains("Queue spool: no more mail handed out")).isEmpty());
        Thread.sleep(500); // five idle polls: a reader that was not stopped would hand "waiting" out
        assertThat(handedOut).isEmpty();

        // James stops: the waiting enqueue ends with the Error James lets through, not a MailQueueException.
        factory.stop();
        assertThatThrownBy(() -> accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS))
            .hasCauseInstanceOf(EnqueueAbandonedAtShutdown.class);
        factory = null;
    }

    @Test
    void aFencedNodeWritesNothingToItsRepositoriesAndSaysWhy() throws Exception {
        KvsSpoolConfiguration configuration = startServerAndJamesConnection();
        KvsQueues queues = new KvsQueues(jamesConnection, configuration);
        factory = factory(queues);
        KvsMailRepository repository = new KvsMailRepository(queues, MailRepositoryUrl.from("kvs://var/mail/error/"));
        MailKey kept = repository.store(mail("stored-before"));
        factory.createQueue(MailQueueFactory.SPOOL);

        // Another writer takes the spool over; the repository's own queue it has not opened (yet).
        otherConnection = KvsClientOpener.connect(configuration);
        otherConnection.open(level(configuration, "spool"), OpenOptions.writer("other-node", 2)).join().orThrow();
        assertThatThrownBy(() -> ((KvsMailQueue) factory.createQueue(MailQueueFactory.SPOOL)).forIntake().enQueue(mail("x")))
            .hasMessageContaining("fenced");
        assertThat(queues.fencing().isFenced()).isTrue();

        assertThatThrownBy(() -> repository.store(mail("stored-after")))
            .isInstanceOf(MessagingException.class)
            .hasMessageContaining("this James node is fenced").hasMessageContaining("nothing was written");
        assertThatThrownBy(() -> repository.remove(kept)).hasMessageContaining("this James node is fenced");
        assertThatThrownBy(repository::removeAll).hasMessageContaining("this James node is fenced");
        // Reads still answer, and show nothing changed.
        assertThat(repository.size()).isEqualTo(1);
        assertThat(repository.retrieve(kept).getName()).isEqualTo("stored-before");
    }

    /** Starts the one KVS server and connects "James" to it; @return James's configuration for it. */
    private KvsSpoolConfiguration startServerAndJamesConnection() throws Exception {
        server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
        KvsSpoolConfiguration configuration = singleServer();
        jamesConnection = KvsClientOpener.connect(configuration);
        return configuration;
    }

    private KvsSpoolConfiguration singleServer() {
        Properties properties = new Properties();
        properties.setProperty("servers", "127.0.0.1:" + server.port());
        properties.setProperty("password", PASSWORD);
        properties.setProperty("idlePollInterval", "100");
        properties.setProperty("requestTimeout", "5000");
        properties.setProperty("nodeId", "james");
        return KvsSpoolConfiguration.from(properties);
    }

    /** James's side of the node: its spool and outgoing queues and its health check. */
    private record JamesQueues(KvsSpoolHealthCheck health, ManageableMailQueue spool, ManageableMailQueue outgoing) {
    }

    /** James's queues on {@code connection}, through a new {@link #factory} (closed by the tear-down). */
    private JamesQueues jamesQueues(KvsQueueOpener connection, KvsSpoolConfiguration configuration) {
        KvsQueues queues = new KvsQueues(connection, configuration);
        factory = factory(queues);
        KvsSpoolHealthCheck health = new KvsSpoolHealthCheck(queues, factory);
        return new JamesQueues(health, factory.createQueue(MailQueueFactory.SPOOL), factory.createQueue(OUTGOING));
    }

    private static KvsMailQueueFactory factory(KvsQueues queues) {
        return new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(), new RecordingMetricFactory(),
            new NoopGaugeRegistry());
    }

    private static String level(KvsSpoolConfiguration configuration, String jamesQueue) {
        return configuration.mailQueuePrefix() + jamesQueue + PriorityLevels.LEVEL_SEPARATOR + MailPriority.NORMAL;
    }

    private static Result result(KvsSpoolHealthCheck health) {
        return Mono.from(health.check()).block(WAIT);
    }

    private static Mail mail(String name) throws Exception {
        return Mails.defaultMail().name(name).build();
    }
}
