package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.WebAdmin;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * End to end, single KVS node: a real KVS server process, a real James 3.8.1 process started with
 * KvsMemoryJamesServerMain and james-conf (spool and outgoing queues in the KVS server, error repository
 * kvs://var/mail/error/), and the SMTP sink standing for the Internet behind RemoteDelivery's gateway.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KvsSpoolE2ETest {
    private static final int MAILS = 200;
    private static final String RECIPIENT = "rcpt@sink.test";
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(120);
    /** james-conf/smtpserver.xml's maxmessagesize, 64512 KB, in bytes. */
    private static final long MAX_MESSAGE_SIZE = 64512L * 1024;

    private static KvsServerProcess kvs;
    private static SmtpSink sink;
    private static JamesProcess james;
    private static WebAdmin webAdmin;

    @BeforeAll
    static void startServers() throws Exception {
        requirePluginJar();
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("kvs-" + System.currentTimeMillis());
        kvs = KvsServerProcess.start(run.resolve("kvs-node1"));
        sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
        james = JamesProcess.start(run.resolve("james"), "kvs", sink.port(), conf -> conf
            .kvsSingleNode(kvs.address(), KvsServerProcess.PASSWORD)
            .kvsRequestTimeoutMillis(5_000));
        webAdmin = new WebAdmin(james.webadminPort());
    }

    @AfterAll
    static void stopServers() throws Exception {
        try {
            if (james != null) {
                james.close();
            }
        } finally {
            try {
                if (kvs != null) {
                    kvs.close();
                }
            } finally {
                if (sink != null) {
                    sink.close();
                }
            }
        }
    }

    @Test
    @Order(1)
    void relaysEveryMailToTheSinkExactlyOnce() throws Exception {
        SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
            .send(MAILS, 8, RECIPIENT, "e2e-relay");
        assertThat(sent.accepted()).as(sent.summary()).isEqualTo(MAILS);

        List<String> ids = IntStream.range(0, MAILS).mapToObj(i -> SmtpLoadSender.messageId("e2e-relay", i)).toList();
        List<String> missing = sink.awaitAll(ids, DELIVERY_TIMEOUT);
        assertThat(missing).as("mails not relayed within %s (%s)\n%s", DELIVERY_TIMEOUT, sink.statsLine(), james.logTail(40))
            .isEmpty();
        Thread.sleep(2_000); // a late duplicate would show up here
        assertThat(ids).allSatisfy(id -> assertThat(sink.count(id)).as("deliveries of %s", id).isEqualTo(1));
        assertThat(sink.duplicates()).isZero();
        assertQueuesDrained();
    }

    @Test
    @Order(2)
    void webadminShowsTheKvsQueuesAndRepository() throws Exception {
        String queues = webAdmin.get("/mailQueues");
        assertThat(queues).contains("\"spool\"", "\"outgoing\"");
        assertThat(webAdmin.get("/mailQueues/spool")).contains("\"name\":\"spool\"", "\"size\":");
        assertThat(webAdmin.get("/mailQueues/outgoing")).contains("\"name\":\"outgoing\"", "\"size\":");

        String repositories = webAdmin.get("/mailRepositories");
        assertThat(repositories).contains("var/mail/error");
        // Answered by KvsMailRepository (a STAT to the KVS server): see the failure test, where it cannot answer.
        assertThat(webAdmin.get("/mailRepositories/var%2Fmail%2Ferror")).contains("\"size\":0");

        // The queue metrics James names (MailQueueMetricContract), reported by the plug-in through James's MetricFactory.
        assertThat(webAdmin.get("/metrics")).contains("enqueuedMail:spool", "dequeuedMail:spool", "mailQueueSize:spool",
            "enqueuedMail:outgoing");
    }

    @Test
    @Order(3)
    void withTheKvsServerDownSmtpAnswers4xxAndMailFlowsAgainOnceItIsBack() throws Exception {
        kvs.stop();

        int codeWhileDown;
        try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 60_000)) {
            codeWhileDown = client.send(SmtpLoadSender.FROM, RECIPIENT,
                SmtpClient.message(SmtpLoadSender.FROM, RECIPIENT, "<e2e-down@kvs-load.test>", "while down"));
        }
        assertThat(codeWhileDown).as("reply to DATA while the KVS server is down (must never be 250)").isBetween(400, 499);
        assertThatRepositoryIsUnavailable();

        kvs.startAgain();

        List<String> ids = new ArrayList<>();
        String first = "<e2e-after-first@kvs-load.test>";
        assertThat(sendUntilAccepted(first, Duration.ofSeconds(60)))
            .as("no 250 within 60 s of the KVS server's restart\n%s", james.logTail(40)).isTrue();
        ids.add(first);
        SmtpLoadSender.Result after = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
            .send(50, 4, RECIPIENT, "e2e-after");
        assertThat(after.accepted()).as(after.summary()).isEqualTo(50);
        IntStream.range(0, 50).mapToObj(i -> SmtpLoadSender.messageId("e2e-after", i)).forEach(ids::add);

        List<String> missing = sink.awaitAll(ids, DELIVERY_TIMEOUT);
        assertThat(missing).as("mails not relayed after the restart (%s)\n%s", sink.statsLine(), james.logTail(40)).isEmpty();
        Thread.sleep(2_000);
        assertThat(ids).allSatisfy(id -> assertThat(sink.count(id)).as("deliveries of %s", id).isEqualTo(1));
        assertThat(sink.count("<e2e-down@kvs-load.test>")).as("the refused mail must not be delivered").isZero();
        assertThat(sink.duplicates()).as(sink.statsLine()).isZero();
        assertThat(james.isAlive()).as("James kept running (never restarted)").isTrue();
    }

    @Test
    @Order(4)
    void mailTheRemoteServerDefersIsRetriedFromTheOutgoingQueueAndDeliveredOnce() throws Exception {
        sink.deferAll(true);
        List<String> ids;
        try {
            SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
                .send(20, 2, RECIPIENT, "e2e-deferred");
            assertThat(sent.accepted()).as(sent.summary()).isEqualTo(20);
            ids = IntStream.range(0, 20).mapToObj(i -> SmtpLoadSender.messageId("e2e-deferred", i)).toList();
            Instant deadline = Instant.now().plusSeconds(30);
            while (sink.deferred() < 20 && Instant.now().isBefore(deadline)) {
                Thread.sleep(100);
            }
            assertThat(sink.deferred()).as("RemoteDelivery attempts answered 451").isGreaterThanOrEqualTo(20);
            assertThat(ids).allSatisfy(id -> assertThat(sink.count(id)).isZero());
        } finally {
            sink.deferAll(false);
        }
        // Retried after RemoteDelivery's delays (1 s, 2 s, 3 x 5 s): delayed mail in the KVS outgoing queue.
        List<String> missing = sink.awaitAll(ids, Duration.ofSeconds(60));
        assertThat(missing).as("deferred mails not retried (%s)\n%s", sink.statsLine(), james.logTail(40)).isEmpty();
        Thread.sleep(2_000);
        assertThat(ids).allSatisfy(id -> assertThat(sink.count(id)).as("deliveries of %s", id).isEqualTo(1));
        assertThat(sink.duplicates()).as(sink.statsLine()).isZero();
    }

    @Test
    @Order(5)
    void mailLargerThanTheSpoolStoresIsRefusedForGoodAndTheLargestAcceptedIsRelayed() throws Exception {
        String tooLarge = "<e2e-too-large@kvs-load.test>";
        String declaredTooLarge = "<e2e-declared-too-large@kvs-load.test>";
        String largest = "<e2e-largest@kvs-load.test>";
        try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 120_000)) {
            // james-conf's maxmessagesize: 63 MiB, below the KVS servers' frame.maxBytes (64 MiB).
            assertThat(client.ehloReply()).as("EHLO announces the limit")
                .anyMatch(line -> line.substring(4).equals("SIZE " + MAX_MESSAGE_SIZE));
            assertThat(client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, tooLarge, 65L << 20, false))
                .as("DATA of 65 MiB: %s %s", client.finalStep(), client.finalReply()).isEqualTo(552);
            assertThat(client.finalStep()).as("refused once the message was sent").isEqualTo("end of DATA");
            assertThat(client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, declaredTooLarge, 65L << 20, true))
                .as("MAIL FROM with SIZE of 65 MiB: %s %s", client.finalStep(), client.finalReply()).isEqualTo(552);
            assertThat(client.finalStep()).as("refused at MAIL FROM, before any of the message was sent").isEqualTo("MAIL");
            // The largest message James takes (headers, then the body up to the limit) is stored and relayed.
            assertThat(client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, largest, MAX_MESSAGE_SIZE - 4096, true))
                .as("a message just under maxmessagesize: %s", client.lastReply()).isEqualTo(250);
        }
        List<String> missing = sink.awaitAll(List.of(largest), DELIVERY_TIMEOUT);
        assertThat(missing).as("the largest message was not relayed (%s)\n%s", sink.statsLine(), james.logTail(40)).isEmpty();
        assertThat(sink.count(largest)).isEqualTo(1);
        assertThat(sink.count(tooLarge) + sink.count(declaredTooLarge)).isZero();
        assertQueuesDrained();
    }

    private boolean sendUntilAccepted(String messageId, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 30_000)) {
                int code = client.send(SmtpLoadSender.FROM, RECIPIENT,
                    SmtpClient.message(SmtpLoadSender.FROM, RECIPIENT, messageId, "after restart"));
                if (code == 250) {
                    return true;
                }
                assertThat(code).as("while recovering, a refusal must be temporary").isBetween(400, 499);
            } catch (IOException e) {
                // James itself should answer; keep trying until the deadline
            }
            Thread.sleep(500);
        }
        return false;
    }

    private void assertThatRepositoryIsUnavailable() throws InterruptedException {
        try {
            String body = webAdmin.get("/mailRepositories/var%2Fmail%2Ferror");
            fail("the kvs:// repository answered although the KVS server is down: " + body);
        } catch (IOException expected) {
            // 500: KvsMailRepository.size() could not reach the server, proving the repository is KVS-backed
        }
    }

    private void assertQueuesDrained() throws Exception {
        Instant deadline = Instant.now().plusSeconds(30);
        String spool = "";
        String outgoing = "";
        while (Instant.now().isBefore(deadline)) {
            spool = webAdmin.get("/mailQueues/spool");
            outgoing = webAdmin.get("/mailQueues/outgoing");
            if (spool.contains("\"size\":0") && outgoing.contains("\"size\":0")) {
                return;
            }
            Thread.sleep(500);
        }
        fail("queues not empty after delivery: " + spool + " " + outgoing);
    }

    private static void requirePluginJar() throws IOException {
        try (Stream<Path> jars = Files.list(JamesProcess.lib())) {
            if (jars.noneMatch(p -> p.getFileName().toString().startsWith("james-kvs-spool-"))) {
                fail("target/james/lib has no james-kvs-spool jar: the plug-in is not a dependency of james-kvs-app");
            }
        }
    }
}
