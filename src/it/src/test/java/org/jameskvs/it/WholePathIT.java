package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import org.jameskvs.testkit.ExternalTool;
import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The base scenario and the SMTP side of the concurrency criterion, on one cluster: three KVS nodes,
 * James with two copies of every queue, the sink.
 * <ol>
 * <li>{@code it.mails} mails from {@code it.sessions} concurrent sessions (SmtpLoadSender): every one
 * answered 250 and delivered exactly once;</li>
 * <li>the same with Postfix's {@code smtp-source} as the load generator, when installed;</li>
 * <li>{@code it.smtpSessions} (1,000) SMTP sessions open at the same time (all greeted and EHLO'd
 * before any sends), one mail each: zero errors, every mail delivered exactly once.</li>
 * </ol>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WholePathIT {
    private static final int MAILS = Integer.getInteger("it.mails", 300);
    private static final int SESSIONS = Integer.getInteger("it.sessions", 8);
    private static final int SMTP_SESSIONS = Integer.getInteger("it.smtpSessions", 1000);

    private static Cluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        // The test's own copy of smtpserver.xml: a listen backlog above the session count, so 1,000
        // simultaneous connects are not dropped at the SYN queue. connectionLimit/connectionLimitPerIP
        // are 0 (= no limit) in james-conf already; James 3.8.1 has no <maxcalls>.
        cluster = Cluster.start("whole-path", conf -> conf
            .replace("smtpserver.xml", "<connectionBacklog>200</connectionBacklog>",
                "<connectionBacklog>" + Math.max(200, SMTP_SESSIONS + 100) + "</connectionBacklog>")
            .replace("smtpserver.xml", "<connectionLimit>0</connectionLimit>", "<connectionLimit>0</connectionLimit>")
            .replace("smtpserver.xml", "<connectionLimitPerIP>0</connectionLimitPerIP>", "<connectionLimitPerIP>0</connectionLimitPerIP>"));
        assertThat(cluster.james.logText()).as("the replication layer is in use")
            .contains("replication: connected to kvs1", "replication: connected to kvs2", "replication: connected to kvs3");
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void everyAcceptedMailIsDeliveredExactlyOnce() throws Exception {
        String prefix = "it-base";
        SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", cluster.james.smtpPort(), 60_000)
            .send(MAILS, SESSIONS, TrackingLoad.RECIPIENT, prefix);
        assertThat(sent.accepted()).as(sent.summary()).isEqualTo(MAILS);
        List<String> ids = IntStream.range(0, MAILS).mapToObj(i -> SmtpLoadSender.messageId(prefix, i)).toList();

        Scenario.Result result = Scenario.account("base", cluster.sink, ids, List.of(),
            "sessions=" + SESSIONS + " elapsed_ms=" + sent.elapsedMillis());
        assertThat(result.lost()).as(result.line() + "\n" + cluster.diagnostics()).isZero();
        assertThat(result.duplicated()).as(result.line()).isZero();
        assertQueuesDrain();
    }

    @Test
    @Order(2)
    void postfixSmtpSourceLoadIsDeliveredExactlyOnce() throws Exception {
        String mode = System.getProperty("it.smtpSource", "auto");
        Path smtpSource = Path.of("/usr/sbin/smtp-source");
        Assumptions.assumeFalse(mode.equals("off"), "it.smtpSource=off");
        if (!Files.isExecutable(smtpSource)) {
            assertThat(mode).as("it.smtpSource=on but %s is not installed (bin/setup installs postfix)", smtpSource).isNotEqualTo("on");
        }
        ExternalTool.assumeAvailable(Files.isExecutable(smtpSource), smtpSource + " not installed (Postfix)");
        String host = "it-smtp-source.test";
        int sessions = SESSIONS;
        // -M: the Message-Id domain, so the sink can tell these mails apart; -l: body bytes.
        Process process = new ProcessBuilder(smtpSource.toString(), "-s", String.valueOf(sessions), "-m", String.valueOf(MAILS),
            "-l", "2000", "-f", SmtpLoadSender.FROM, "-t", TrackingLoad.RECIPIENT, "-M", host,
            "127.0.0.1:" + cluster.james.smtpPort())
            .redirectErrorStream(true).start();
        boolean finished = process.waitFor(5, TimeUnit.MINUTES);
        String output = new String(process.getInputStream().readAllBytes());
        if (!finished) {
            process.destroyForcibly();
        }
        assertThat(finished).as("smtp-source finished within 5 minutes").isTrue();
        // smtp-source warns (or dies) on any reply that is not 2xx; silent exit 0 = every mail got 250.
        assertThat(process.exitValue()).as("smtp-source exit status; output:\n%s", output).isZero();
        assertThat(output).as("smtp-source output").doesNotContainIgnoringCase("warning").doesNotContainIgnoringCase("fatal");

        String suffix = "@" + host + ">";
        java.time.Instant deadline = java.time.Instant.now().plus(Scenario.DELIVERY_TIMEOUT);
        while (fromSmtpSource(suffix).size() < MAILS && java.time.Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
        }
        Thread.sleep(2_000);
        Map<String, Integer> seen = fromSmtpSource(suffix);
        long duplicated = seen.values().stream().mapToLong(c -> c - 1).sum();
        int delivered = seen.size();
        Scenario.report("scenario=base-smtp-source accepted=" + MAILS + " delivered=" + delivered + " lost=" + (MAILS - delivered)
            + " duplicated=" + duplicated + " unknown=0 unknownDelivered=0 sessions=" + sessions);
        assertThat(delivered).as("distinct smtp-source mails at the sink\n%s", cluster.diagnostics()).isEqualTo(MAILS);
        assertThat(duplicated).isZero();
    }

    private static Map<String, Integer> fromSmtpSource(String suffix) {
        Map<String, Integer> seen = new java.util.TreeMap<>();
        cluster.sink.countsById().forEach((id, count) -> {
            if (id.endsWith(suffix)) {
                seen.put(id, count);
            }
        });
        return seen;
    }

    @Test
    @Order(3)
    void thousandConcurrentSmtpSessionsWithoutErrors() throws Exception {
        int sessions = SMTP_SESSIONS;
        long ownLimit = Limits.ownOpenFiles();
        long jamesLimit = Limits.openFiles(cluster.james.pid());
        assertThat(ownLimit).as("open-files limit of the test JVM (raise ulimit -n of the shell running mvn)")
            .isGreaterThan(sessions + 1_000L);
        String prefix = "it-concurrent-smtp";
        CountDownLatch greeted = new CountDownLatch(sessions);
        CountDownLatch go = new CountDownLatch(1);
        Map<String, String> errors = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> codes = new ConcurrentHashMap<>();
        AtomicInteger opened = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < sessions; i++) {
            int n = i;
            Thread t = new Thread(() -> oneSession(prefix, n, greeted, go, opened, errors, codes), "smtp-session-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        // Every session connected, greeted and answered EHLO before any mail is sent: 1,000 sessions open at once.
        boolean allOpen = greeted.await(120, TimeUnit.SECONDS);
        long openMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        long openCount = opened.get();
        go.countDown();
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.SECONDS.toMillis(180) - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
        }
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        long stillRunning = threads.stream().filter(Thread::isAlive).count();
        Map<Integer, Integer> codeCounts = new java.util.TreeMap<>();
        codes.forEach((k, v) -> codeCounts.put(k, v.get()));
        List<String> ids = IntStream.range(0, sessions).mapToObj(i -> SmtpLoadSender.messageId(prefix, i)).toList();
        List<String> accepted = ids.stream().filter(id -> !errors.containsKey(id)).toList();
        Scenario.report("concurrency=smtp sessions=" + sessions + " simultaneouslyOpen=" + openCount + " open_ms=" + openMillis
            + " errors=" + errors.size() + " codes=" + codeCounts + " elapsed_ms=" + elapsedMillis
            + " openFiles(testJVM)=" + ownLimit + " openFiles(james)=" + jamesLimit);
        assertThat(stillRunning).as("sessions still running after 180 s").isZero();
        assertThat(allOpen && openCount == sessions).as("all %d sessions greeted within 120 s (%d were)", sessions, openCount).isTrue();
        assertThat(errors).as("session errors (first ones)").isEmpty();

        Scenario.Result result = Scenario.account("concurrent-smtp-" + sessions, cluster.sink, accepted, List.of(), "");
        assertThat(result.lost()).as(result.line() + "\n" + cluster.diagnostics()).isZero();
        assertThat(result.duplicated()).as(result.line()).isZero();
    }

    private static void oneSession(String prefix, int n, CountDownLatch greeted, CountDownLatch go,
                                   AtomicInteger opened, Map<String, String> errors, Map<Integer, AtomicInteger> codes) {
        String id = SmtpLoadSender.messageId(prefix, n);
        boolean counted = false;
        try (SmtpClient client = SmtpClient.connect("127.0.0.1", cluster.james.smtpPort(), 120_000)) {
            opened.incrementAndGet();
            greeted.countDown();
            counted = true;
            if (!go.await(150, TimeUnit.SECONDS)) {
                errors.put(id, "never told to send");
                return;
            }
            int code = client.send(SmtpLoadSender.FROM, TrackingLoad.RECIPIENT,
                SmtpClient.message(SmtpLoadSender.FROM, TrackingLoad.RECIPIENT, id, "concurrent " + n));
            codes.computeIfAbsent(code, k -> new AtomicInteger()).incrementAndGet();
            if (code != 250) {
                errors.put(id, "DATA answered " + code);
            }
        } catch (IOException | RuntimeException e) {
            errors.put(id, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            errors.put(id, "interrupted");
        } finally {
            if (!counted) {
                greeted.countDown(); // don't hold the others; the error is recorded
            }
        }
    }

    private static void assertQueuesDrain() throws InterruptedException {
        java.time.Instant deadline = java.time.Instant.now().plusSeconds(30);
        String spool = "";
        String outgoing = "";
        while (java.time.Instant.now().isBefore(deadline)) {
            spool = cluster.james.webadmin("/mailQueues/spool");
            outgoing = cluster.james.webadmin("/mailQueues/outgoing");
            if (spool.contains("\"size\":0") && outgoing.contains("\"size\":0")) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("queues not empty after delivery: " + spool + " " + outgoing);
    }
}
