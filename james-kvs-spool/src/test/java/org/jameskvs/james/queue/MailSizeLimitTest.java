package org.jameskvs.james.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Properties;

import org.apache.james.core.builder.MimeMessageBuilder;
import org.apache.james.metrics.api.NoopGaugeRegistry;
import org.apache.james.metrics.tests.RecordingMetricFactory;
import org.apache.james.queue.api.MailQueueName;
import org.apache.james.queue.api.Mails;
import org.apache.james.queue.api.ManageableMailQueue;
import org.apache.james.queue.api.RawMailQueueItemDecoratorFactory;
import org.apache.mailet.Mail;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.server.KvsServer;
import org.jameskvs.server.ServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A mail too large for the KVS servers is refused for good (MailTooLargeException), by the plug-in
 * before sending, or on the server's FRAME_TOO_LARGE when the server's frame.maxBytes is the smaller;
 * nothing is stored. Real server, in process.
 */
class MailSizeLimitTest {
    private static final String PASSWORD = "size-limit";
    private static final int FRAME_MAX_BYTES = 256 * 1024;
    @TempDir
    Path dir;

    @Test
    void aMailOverThePluginsLimitIsRefusedBeforeItIsSent() throws Exception {
        try (KvsServer server = KvsServer.start(ServerConfig.forTest(dir, PASSWORD))) {
            withQueue(server, FRAME_MAX_BYTES, outgoing -> {
                outgoing.enQueue(mailOf("fits", FRAME_MAX_BYTES / 2));

                assertThatThrownBy(() -> outgoing.enQueue(mailOf("too-large", FRAME_MAX_BYTES)))
                    .isInstanceOf(MailTooLargeException.class)
                    .hasMessageContaining("too-large")
                    .hasMessageContaining("frameMaxBytes " + FRAME_MAX_BYTES);
                assertThat(outgoing.getSize()).isEqualTo(1);
            });
        }
    }

    @Test
    void aServerWithASmallerFrameLimitRefusesForGoodToo() throws Exception {
        Properties p = ServerConfig.testProperties(dir, PASSWORD);
        p.setProperty("frame.maxBytes", String.valueOf(FRAME_MAX_BYTES / 2));
        try (KvsServer server = KvsServer.start(ServerConfig.fromProperties(p))) {
            withQueue(server, FRAME_MAX_BYTES, outgoing -> {
                assertThatThrownBy(() -> outgoing.enQueue(mailOf("over-the-server", FRAME_MAX_BYTES * 3 / 4)))
                    .isInstanceOf(MailTooLargeException.class)
                    .hasMessageContaining("frame.maxBytes");
                assertThat(outgoing.getSize()).isZero();
            });
        }
    }

    private interface QueueTest {
        void run(ManageableMailQueue queue) throws Exception;
    }

    private static void withQueue(KvsServer server, int frameMaxBytes, QueueTest test) throws Exception {
        Properties p = new Properties();
        p.setProperty("servers", "127.0.0.1:" + server.port());
        p.setProperty("password", PASSWORD);
        p.setProperty("frameMaxBytes", String.valueOf(frameMaxBytes));
        KvsSpoolConfiguration configuration = KvsSpoolConfiguration.from(p);
        try (KvsClientOpener opener = KvsClientOpener.connect(configuration);
             KvsQueues queues = new KvsQueues(opener, configuration)) {
            KvsMailQueueFactory factory = new KvsMailQueueFactory(queues, new RawMailQueueItemDecoratorFactory(),
                new RecordingMetricFactory(), new NoopGaugeRegistry());
            try {
                // "outgoing": not an intake queue, where refusals that a retry can fix are retried.
                test.run(factory.createQueue(MailQueueName.of("outgoing")));
            } finally {
                factory.stop();
            }
        }
    }

    private static Mail mailOf(String name, int textBytes) throws Exception {
        return Mails.defaultMail().name(name)
            .mimeMessage(MimeMessageBuilder.mimeMessageBuilder().setSubject(name).setText("x".repeat(textBytes)))
            .build();
    }
}
