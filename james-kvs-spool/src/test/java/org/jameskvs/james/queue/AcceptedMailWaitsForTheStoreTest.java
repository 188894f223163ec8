package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.james.core.healthcheck.ResultStatus;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueue;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.awaitility.Awaitility;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.james.health.KvsSpoolHealthCheck;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The KVS server is down for longer than {@code acceptedMailRetryTimeout} (which used to be the
 * deadline after which accepted mail went to James's error processor): an enqueue of accepted mail
 * waits, is reported meanwhile (health check degraded), and completes once the server is back
 * (real server process stopped and started again on its port and journal).
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

    @Test
    void anAcceptedEnqueueWaitsForAStoreDownLongerThanTheOldTimeoutAndCompletesOnceItIsBack() throws Exception {
        server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
        int port = server.port();
        Properties properties = new Properties();
        properties.setProperty("servers", "127.0.0.1:" + port);
        properties.setProperty("password", PASSWORD);
        properties.setProperty("requestTimeout", "2000");
        properties.setProperty("acceptedMailRetryTimeout", "500");
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(properties);
        connection = KvsClientOpener.connect(configuration);
        KvsQueues queues = new KvsQueues(connection, configuration);
        factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(), new RecordingMetricFactory(),
            new NoopGaugeRegistry());
        KvsSpoolHealthCheck health = new KvsSpoolHealthCheck(queues, factory);
        ManageableMailQueue outgoing = factory.createQueue(MailQueueName.of("outgoing"));

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

        server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD).withListenPort(port));

        accepted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(outgoing.getSize()).isEqualTo(1);
        MailQueue.MailQueueItem item = Flux.from(outgoing.deQueue()).blockFirst(WAIT);
        assertThat(item.getMail().getName()).isEqualTo("accepted-while-down");
        assertThat(factory.overdueEnqueues().count()).isZero();
        assertThat(Mono.from(health.check()).block().getStatus()).isEqualTo(ResultStatus.HEALTHY);
    }
}
