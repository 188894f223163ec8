package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.WebAdmin;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;

import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.Test;

/**
 * A mail already answered 250 that James itself puts back into the {@code spool} queue (here the
 * standard {@code Requeue} mailet, sending big mails on to the transport processor through the
 * queue; James's bounces, forwards and its spooler's own re-enqueue take the same path) while the
 * store refuses writes of that size: the KVS node's journal is at its {@code journal.maxBytes}, so a
 * mail does not fit while a delete still does. Real KVS server process, real James 3.8.1.
 *
 * <p>The spool is an intake queue: SMTP's enqueue into it must fail at once (4xx, the client keeps
 * the mail). James's own enqueue into it carries mail nobody else holds: it must wait for the store.
 * Before the two were told apart, the requeue failed at once, the error processor could not store
 * the mail either (same store), the spooler's re-enqueue failed, and the spooler rejected the mail it
 * had dequeued, so the KVS deleted it: an accepted mail lost. Now the requeue waits (the health check
 * turns degraded past {@code acceptedMailRetryTimeout}) while SMTP still answers 4xx at once, and
 * once the node is restarted without the limit the mail is relayed; the error repository stays empty.
 */
class RequeuedMailWaitsForTheStoreE2ETest {
    private static final String RECIPIENT = "rcpt@sink.test";
    /** Over the Requeue matcher's 100k, and big enough that a second copy cannot fit in the margin. */
    private static final long BODY_BYTES = 256 * 1024;
    private static final Duration WAIT = Duration.ofSeconds(120);

    @Test
    void aMailJamesRequeuesWhileTheStoreIsFullWaitsAndIsRelayedOnceTheStoreTakesItAgain() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("requeue-" + System.currentTimeMillis());
        // Room for James's start, a small mail and one copy of the big one (SMTP's), not for a second
        // copy (the requeue's); a delete (tens of bytes) still fits.
        try (KvsServerProcess kvs = KvsServerProcess.start(run.resolve("kvs-node1"), "metrics.enabled=false",
                 "journal.maxBytes=" + BODY_BYTES * 3 / 2);
             SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
             JamesProcess james = JamesProcess.start(run.resolve("james"), "kvs", sink.port(), conf -> conf
                 .kvsSingleNode(kvs.address(), KvsServerProcess.PASSWORD)
                 .kvsRequestTimeoutMillis(5_000)
                 .replace("kvs-spool.properties", "\nacceptedMailRetryTimeout=120000\n", "\nacceptedMailRetryTimeout=1000\n")
                 .replace("mailetcontainer.xml", "<processor state=\"root\" enableJmx=\"true\">",
                     "<processor state=\"root\" enableJmx=\"true\">\n"
                         + "<mailet match=\"SizeGreaterThan=100k\" class=\"Requeue\">"
                         + "<queue>spool</queue><processor>transport</processor></mailet>"))) {
            WebAdmin webAdmin = new WebAdmin(james.webadminPort());
            String warmUp = "<requeue-warm-up@kvs-load.test>";
            assertThat(sendUntilAccepted(james, warmUp, 1_000)).as("a small mail before the limit").isTrue();
            assertThat(sink.awaitAll(List.of(warmUp), WAIT)).as(james.logTail(40)).isEmpty();

            String big = "<requeue-big@kvs-load.test>";
            assertThat(sendUntilAccepted(james, big, BODY_BYTES)).as("the big mail answered 250\n%s", james.logTail(40)).isTrue();

            awaitTrue(() -> webAdmin.getAnyStatus("/healthcheck/checks/KVS%20spool").body().contains("\"degraded\""),
                () -> "the requeue waits for the store (health check degraded)\n" + james.logTail(60));
            assertThat(sink.count(big)).isZero();
            assertThat(webAdmin.get("/mailRepositories/var%2Fmail%2Ferror")).as("error repository").contains("\"size\":0");
            // Meanwhile SMTP's own enqueue (an intake caller's) still fails at once: 4xx, the client keeps the mail.
            String refused = "<requeue-refused@kvs-load.test>";
            try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 60_000)) {
                assertThat(client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, refused, BODY_BYTES, false))
                    .as("SMTP while the store refuses the mail: %s", client.lastReply()).isBetween(400, 499);
            }

            kvs.stop();
            kvs.configure("metrics.enabled=false");
            kvs.startAgain();

            List<String> missing = sink.awaitAll(List.of(big), WAIT);
            assertThat(missing).as("the requeued mail relayed once the store takes it (%s)\n%s", sink.statsLine(),
                james.logTail(60)).isEmpty();
            assertThat(sink.count(big)).isEqualTo(1);
            assertThat(sink.count(refused)).as("the mail answered 4xx").isZero();
            awaitTrue(() -> webAdmin.getAnyStatus("/healthcheck/checks/KVS%20spool").body().contains("\"healthy\""),
                () -> "health check healthy again\n" + james.logTail(40));
            assertThat(webAdmin.get("/mailRepositories/var%2Fmail%2Ferror")).as("error repository").contains("\"size\":0");
            assertThat(webAdmin.queueSize("spool")).isZero();
        }
    }

    /** Sends one mail (retrying 4xx for a bounded time: James reconnects after a node restart). */
    private static boolean sendUntilAccepted(JamesProcess james, String messageId, long bodyBytes) throws Exception {
        Instant deadline = Instant.now().plus(WAIT);
        while (Instant.now().isBefore(deadline)) {
            try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 60_000)) {
                int code = client.sendOfSize(SmtpLoadSender.FROM, RECIPIENT, messageId, bodyBytes, false);
                if (code == 250) {
                    return true;
                }
                assertThat(code).as("a refusal must be temporary: %s", client.lastReply()).isBetween(400, 499);
            } catch (IOException e) {
                // James answers again once it is reconnected; retry until the deadline
            }
            Thread.sleep(500);
        }
        return false;
    }

    private static void awaitTrue(Callable<Boolean> condition, java.util.function.Supplier<String> what) throws Exception {
        Instant deadline = Instant.now().plus(WAIT);
        while (Instant.now().isBefore(deadline)) {
            try {
                if (condition.call()) {
                    return;
                }
            } catch (IOException e) {
                // webadmin busy or James reconnecting: ask again
            }
            Thread.sleep(250);
        }
        throw new AssertionError("not within " + WAIT + ": " + what.get());
    }
}
