package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Properties;
import java.util.function.UnaryOperator;

import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueueFactory;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two James nodes started with the same ownerName/namespace on one KVS cluster (real servers): the
 * second refuses to start, naming both, while the first is alive, and the first keeps working
 * (not fenced). Once the first is gone, the same identity starts again and takes its queues back.
 */
class NodeIdentityGuardTest {
    private static final String PASSWORD = "guard-secret";

    @TempDir
    Path dir;

    private TwoKvsNodes nodes;
    private KvsServer server;
    private final java.util.List<AutoCloseable> toClose = new java.util.ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        Closing.inReverse(toClose);
        if (nodes != null) {
            nodes.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void withTwoCopiesASecondNodeWithTheSameIdentityRefusesToStartWhileTheFirstRenewsItsLease() throws Exception {
        nodes = new TwoKvsNodes();
        KvsSpoolConfiguration configuration = nodes.configuration("namespace", "guarded",
            "replication.leaseRenewMillis", "200", "idlePollInterval", "100");
        KvsQueueOpener first = nodes.connect(configuration, UnaryOperator.identity());
        NodeIdentityGuard.check(first, configuration); // nothing written under this identity yet
        KvsQueues firstQueues = new KvsQueues(first, configuration);
        KvsMailQueueFactory firstFactory = factory(firstQueues);
        ManageableMailQueue firstSpool = firstFactory.createQueue(MailQueueFactory.SPOOL);
        firstSpool.enQueue(Mails.defaultMail().name("before").build());

        KvsQueueOpener second = nodes.connect(configuration, UnaryOperator.identity());
        assertThatThrownBy(() -> NodeIdentityGuard.check(second, configuration))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("refusing to start")
            .hasMessageContaining("ownerName=james")
            .hasMessageContaining("namespace=guarded")
            .hasMessageContaining("guarded/queue/spool@p" + MailPriority.NORMAL);

        // The first node was not disturbed.
        firstSpool.enQueue(Mails.defaultMail().name("after").build());
        assertThat(firstQueues.fencing().isFenced()).isFalse();

        // The first node goes away (no more lease renewals): the same identity starts and takes its queues back.
        firstFactory.stop();
        firstQueues.close();
        ((AutoCloseable) first).close();
        NodeIdentityGuard.check(second, configuration);
        KvsMailQueueFactory secondFactory = factory(new KvsQueues(second, configuration));
        assertThat(secondFactory.createQueue(MailQueueFactory.SPOOL).getSize()).isEqualTo(2);
    }

    @Test
    void onOneServerASecondNodeWithTheSameIdentityRefusesToStartWhileTheFirstHoldsTheSpool() throws Exception {
        server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD));
        Properties properties = new Properties();
        properties.setProperty("servers", "127.0.0.1:" + server.port());
        properties.setProperty("password", PASSWORD);
        properties.setProperty("namespace", "guarded");
        properties.setProperty("nodeId", "james");
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(properties);
        KvsClientOpener first = connect(configuration);
        NodeIdentityGuard.check(first, configuration);
        KvsQueues firstQueues = new KvsQueues(first, configuration);
        KvsMailQueueFactory firstFactory = factory(firstQueues);
        ManageableMailQueue firstSpool = firstFactory.createQueue(MailQueueFactory.SPOOL);

        KvsClientOpener second = connect(configuration);
        assertThatThrownBy(() -> NodeIdentityGuard.check(second, configuration))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("ownerName=james")
            .hasMessageContaining("namespace=guarded")
            .hasMessageContaining("QUEUE_LOCKED");
        firstSpool.enQueue(Mails.defaultMail().name("still-accepted").build());
        assertThat(firstQueues.fencing().isFenced()).isFalse();

        firstFactory.stop();
        firstQueues.close();
        first.close();
        NodeIdentityGuard.check(second, configuration);
        assertThat(factory(new KvsQueues(second, configuration)).createQueue(MailQueueFactory.SPOOL).getSize()).isEqualTo(1);
    }

    private KvsClientOpener connect(KvsSpoolConfiguration configuration) {
        KvsClientOpener opener = KvsClientOpener.connect(configuration);
        toClose.add(opener);
        return opener;
    }

    private KvsMailQueueFactory factory(KvsQueues queues) {
        KvsMailQueueFactory factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
            new RecordingMetricFactory(), new NoopGaugeRegistry());
        toClose.add(factory::stop);
        return factory;
    }
}
