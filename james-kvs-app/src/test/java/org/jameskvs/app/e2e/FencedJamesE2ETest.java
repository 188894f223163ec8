package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.WebAdmin;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Properties;
import java.util.stream.IntStream;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.james.KvsClientOpener;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.ReservedIds;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.Test;

/**
 * Issue 11 end to end, with a real James 3.8.1 and a real KVS server process:
 * <ol>
 * <li>a second James started with the same ownerName/namespace refuses to start, and the first keeps
 *   taking mail;</li>
 * <li>a second writer then takes the first James's queues over at a higher epoch, while mail it
 *   accepted is being retried from its outgoing queue (the next hop deferring it). James meets the
 *   other writer on its own, as a paused owner that resumes does: RemoteDelivery re-enqueues a
 *   deferred mail into outgoing and gets STALE_EPOCH. Before, that failed into James's error path;
 *   now that mail waits in place, and James answers 4xx, reports itself unhealthy on webadmin's
 *   /healthcheck, logs one alert, delivers nothing more (not even when the next hop accepts again)
 *   and puts nothing in its error repository; every mail it accepted is still in the queues for the
 *   writer that holds them, also after James stopped: once, or twice for a mail whose re-enqueue was
 *   stored just before the delete of its old copy met the other writer (the log names it; the
 *   README's "mail in delivery at the pause goes out twice").</li>
 * </ol>
 */
class FencedJamesE2ETest {
    private static final String RECIPIENT = "rcpt@sink.test";
    private static final int PARKED = 10;
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    /** KVS queue of a James queue's normal priority level (5 in James 3.8). */
    private static final String SPOOL = "james/queue/spool@p5";
    private static final String OUTGOING = "james/queue/outgoing@p5";
    private static final String ERROR_REPOSITORY = "james/repo/var/mail/error";

    @Test
    void aSecondNodeWithTheSameIdentityRefusesToStartAndAFencedJamesStopsWithoutLosingOrErroringMail() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("fenced-" + System.currentTimeMillis());
        try (KvsServerProcess kvs = KvsServerProcess.start(run.resolve("kvs-node1"));
             SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER)) {
            JamesProcess james = JamesProcess.start(run.resolve("james"), "kvs", sink.port(), conf -> conf
                .kvsSingleNode(kvs.address(), KvsServerProcess.PASSWORD)
                .kvsRequestTimeoutMillis(5_000));
            try {
                WebAdmin webAdmin = new WebAdmin(james.webadminPort());
                assertThat(send(james, "<e2e-before-twin@kvs-load.test>")).isEqualTo(250);

                aTwinRefusesToStart(run, kvs, sink, james);
                assertThat(send(james, "<e2e-after-twin@kvs-load.test>")).as("the first James is not disturbed").isEqualTo(250);
                List<String> first = List.of("<e2e-before-twin@kvs-load.test>", "<e2e-after-twin@kvs-load.test>");
                assertThat(sink.awaitAll(first, TIMEOUT)).as(james.logTail(40)).isEmpty();

                // Mail accepted (250) and waiting in outgoing: the next hop defers it.
                sink.deferAll(true);
                SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
                    .send(PARKED, 2, RECIPIENT, "e2e-parked");
                assertThat(sent.accepted()).as(sent.summary()).isEqualTo(PARKED);
                awaitTrue(() -> sink.deferred() >= PARKED && webAdmin.queueSize("spool") == 0, "mails deferred once");

                try (KvsClientOpener otherWriter = KvsClientOpener.connect(clientOf(kvs))) {
                    KvsQueue spool = otherWriter.open(SPOOL, OpenOptions.writer("other-node", 2)).join().orThrow();
                    KvsQueue outgoing = otherWriter.open(OUTGOING, OpenOptions.writer("other-node", 2)).join().orThrow();

                    // No SMTP yet: RemoteDelivery's next retry (1 s, 2 s, 5 s after the deferrals) re-enqueues into
                    // outgoing, meets the other writer and fences this James.
                    awaitTrue(() -> webAdmin.getAnyStatus("/healthcheck").statusCode() == 503, "James finds itself fenced");
                    // What met the other writer first depends on timing: a re-enqueue (it then waits in place) or
                    // the delete of a mail done (the mail is left in the queue). Either way the mail stays for the
                    // other writer, once (asserted below).
                    awaitTrue(() -> james.logText().contains("not enqueued: this James node is fenced")
                        || james.logText().contains("left in the queue for the writer that holds it"), "the fenced write leaves the mail in place");
                    assertThat(james.logText()).contains("KVS spool FENCED: queue " + OUTGOING);
                    assertThat(send(james, "<e2e-fenced@kvs-load.test>")).as("reply to DATA once fenced\n%s", james.logTail(40))
                        .isBetween(400, 499);
                    HttpResponse<String> health = webAdmin.getAnyStatus("/healthcheck");
                    assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
                    assertThat(health.body()).contains("KVS spool", "unhealthy", "fenced");
                    assertThat(webAdmin.getAnyStatus("/healthcheck/checks/KVS%20spool").statusCode()).isEqualTo(503);

                    // The next hop accepts again: a James that still handed mail out would deliver the parked
                    // mail now, within its retry delays (1 s, 2 s, 5 s), and again and again, since it could
                    // not delete what it delivered.
                    sink.deferAll(false);
                    Thread.sleep(10_000);
                    List<String> parked = IntStream.range(0, PARKED).mapToObj(i -> SmtpLoadSender.messageId("e2e-parked", i)).toList();
                    assertThat(parked).as("delivered by the fenced James (%s)", sink.statsLine())
                        .allSatisfy(id -> assertThat(sink.count(id)).isZero());
                    assertThat(sink.count("<e2e-fenced@kvs-load.test>")).isZero();

                    assertThat(webAdmin.get("/mailRepositories/var%2Fmail%2Ferror")).contains("\"size\":0");
                    assertThat(occurrences(james.logText(), "KVS spool FENCED")).as("alerts logged").isEqualTo(1);
                    assertThat(james.logText()).contains("ownerName=james", "namespace=james");
                    assertThat(spool.stat().join().size()).isZero();
                    // A mail whose re-enqueue waits was never completed: its old copy is there, and no second one. A
                    // mail whose re-enqueue was stored before its old copy's delete met the other writer is there
                    // twice (both copies left for the other writer, the log says which): never lost, never thrice.
                    assertParkedMailForTheOtherWriter(outgoing, james);

                    james.close();
                    assertThat(james.logText()).contains("JAMES server stopped");
                    assertParkedMailForTheOtherWriter(outgoing, james);
                    assertThat(spool.stat().join().size()).isZero();
                    KvsQueue errors = otherWriter.open(ERROR_REPOSITORY, OpenOptions.reader()).join().orThrow();
                    assertThat(errors.stat().join().size()).as("mail in the error repository").isZero();
                }
            } finally {
                james.close();
            }
        }
    }

    private static void aTwinRefusesToStart(Path run, KvsServerProcess kvs, SmtpSink sink, JamesProcess first) throws Exception {
        JamesProcess twin = JamesProcess.launch(run.resolve("james-twin"), "kvs", sink.port(), conf -> conf
            .kvsSingleNode(kvs.address(), KvsServerProcess.PASSWORD)
            .kvsRequestTimeoutMillis(5_000));
        try {
            assertThat(twin.awaitExit(Duration.ofSeconds(180))).as("the twin exits\n%s", twin.logTail(40)).isTrue();
            assertThat(twin.logText()).as(twin.logTail(60))
                .contains("refusing to start", "ownerName=james", "namespace=james")
                .doesNotContain("JAMES server started");
        } finally {
            twin.close();
        }
        assertThat(first.logText()).doesNotContain("KVS spool FENCED");
    }

    private static KvsSpoolConfiguration clientOf(KvsServerProcess kvs) {
        Properties properties = new Properties();
        properties.setProperty("servers", kvs.address());
        properties.setProperty("password", KvsServerProcess.PASSWORD);
        return KvsSpoolConfiguration.from(properties);
    }

    private static int send(JamesProcess james, String messageId) throws Exception {
        try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 60_000)) {
            return client.send(SmtpLoadSender.FROM, RECIPIENT,
                SmtpClient.message(SmtpLoadSender.FROM, RECIPIENT, messageId, "fencing e2e"));
        }
    }

    private interface Check {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(Check check, String what) throws Exception {
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (!check.holds()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("not within " + TIMEOUT + ": " + what);
            }
            Thread.sleep(200);
        }
    }

    /** Every parked mail in outgoing, once, or twice if James left its old copy after storing its re-enqueue. */
    private static void assertParkedMailForTheOtherWriter(KvsQueue outgoing, JamesProcess james) throws Exception {
        ReadResult all = outgoing.read(0, 10_000, 64 << 20, Long.MAX_VALUE).join();
        assertThat(all.status()).isEqualTo(Status.OK);
        Map<String, Long> copies = new TreeMap<>();
        for (StoredMessage m : all.messages()) {
            if (ReservedIds.isReserved(m.id())) {
                continue; // a record of the spool's own, not a mail
            }
            copies.merge(MailCodec.decode(m.body(), "outgoing").getName(), 1L, Long::sum);
        }
        assertThat(copies).as("parked mails in outgoing, for the other writer").hasSize(PARKED);
        String log = james.logText();
        copies.forEach((name, n) -> {
            assertThat(n).as("copies of %s", name).isBetween(1L, 2L);
            if (n == 2) {
                assertThat(log).as("why %s is there twice", name)
                    .contains("mail " + name + " left in the queue for the writer that holds it");
            }
        });
    }

    private static int occurrences(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            count++;
        }
        return count;
    }
}
