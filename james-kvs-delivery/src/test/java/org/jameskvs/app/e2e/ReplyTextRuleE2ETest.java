package org.jameskvs.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.ReportChart;
import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A reply-text shaping rule on real parts (a KVS server process, a real James whose relay processor
 * uses LaneDelivery configured in mailetcontainer.xml, the per-domain SMTP target through the test DNS
 * zone). Two domains refuse every recipient temporarily with the same code, 451, but different texts:
 * {@code limited.test} says "4.7.1 rate limited", {@code busy.test} "4.3.0 mailbox busy". The rule
 * {@code code=4xx; text=rate limited|too many connections; suspendAfterFailures=3} suspends only the
 * first (for SUSPEND_SECONDS); the second keeps being retried and is never suspended. The first's
 * suspension expires by itself: once it does (no administrator), its mail is delivered, none of it
 * before the suspension's end, every mail once. Written: lanes-shaping.md and its chart
 * lanes-shaping.png ({@link LaneReport}): the time from the suspension to the last connection opened,
 * from its expiry to the first connection and the first mail.
 */
class ReplyTextRuleE2ETest {
    private static final int PER_DOMAIN = 20;
    private static final int SUSPEND_SECONDS = 15;
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final String LIMITED = "limited.test";
    private static final String BUSY = "busy.test";
    private static final String OK = "ok.test";

    @Test
    void onlyTheDomainWhoseReplyTextMatchesIsSuspendedAndItsSuspensionExpires() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("reply-rule-" + System.currentTimeMillis());
        Files.createDirectories(run);
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put(LIMITED, Behaviour.rcptReply("451 4.7.1 rate limited, try again later"));
        behaviours.put(BUSY, Behaviour.rcptReply("451 4.3.0 mailbox busy, try again later"));
        behaviours.put(OK, Behaviour.accept());
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours);
             KvsServerProcess kvs = KvsServerProcess.start(run.resolve("kvs"));
             JamesProcess james = LaneJames.start(run.resolve("james"), target, conf -> laneDelivery(conf
                 .kvsSingleNode(kvs.address(), KvsServerProcess.PASSWORD), target.port()))) {
            LaneAdmin admin = new LaneAdmin(james.webadminPort());
            SmtpLoadSender sender = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000);
            for (String domain : behaviours.keySet()) {
                SmtpLoadSender.Result sent = sender.send(PER_DOMAIN, 4, "rcpt@" + domain, "rule-" + domain);
                assertThat(sent.accepted()).as(sent.summary()).isEqualTo(PER_DOMAIN);
            }

            LaneJames.awaitOrFail(() -> target.domain(OK).messageIds().containsAll(ids(OK)), "every mail to " + OK, TIMEOUT, james);
            LaneJames.awaitOrFail(() -> {
                JsonNode lane = admin.lane(LIMITED);
                return lane.get("suspended").asBoolean() && lane.get("inFlight").asInt() == 0;
            }, LIMITED + " suspended by the reply rule, nothing in delivery: " + admin.lane(LIMITED), TIMEOUT, james);
            JsonNode limited = admin.lane(LIMITED);
            Instant until = Instant.parse(limited.get("suspendedUntil").asText());
            long refusedBeforeSuspension = target.domain(LIMITED).refusedRecipients();
            // Any connection from now until the suspension ends would deliver a mail before its end.
            target.domain(LIMITED).behave(Behaviour.accept());

            // busy.test answers 451 too, with another text: retried again and again, never suspended.
            LaneJames.awaitOrFail(() -> target.domain(BUSY).refusedRecipients() >= 5L * PER_DOMAIN,
                BUSY + " retried past the rule's threshold many times", TIMEOUT, james);
            JsonNode busy = admin.lane(BUSY);
            System.out.printf("ReplyTextRuleE2ETest: %s lane: %s%n%s lane: %s%n", LIMITED, limited, BUSY, busy);
            assertThat(limited.get("suspensionReason").asText()).contains("replyRule1").contains("rate limited");
            assertThat(limited.get("suspensions").asLong()).isGreaterThanOrEqualTo(1); // 2 if the machine was slow to look before it expired
            assertThat(refusedBeforeSuspension).as("refusals before the suspension: at least the threshold").isGreaterThanOrEqualTo(3);
            assertThat(busy.get("suspended").asBoolean()).isFalse();
            assertThat(busy.get("suspensions").asLong()).isZero();
            assertThat(target.domain(BUSY).accepted()).isZero();

            // limited.test's suspension expires by itself: then, and only then, its mail goes out.
            LaneJames.awaitOrFail(() -> target.domain(LIMITED).messageIds().containsAll(ids(LIMITED)),
                "every mail to " + LIMITED + " once its suspension expired", TIMEOUT, james);
            long firstArrival = Collections.min(target.domain(LIMITED).arrivals().values());
            System.out.printf("ReplyTextRuleE2ETest: %s suspended until %s, first mail arrived %s (%+d ms)%n",
                LIMITED, until, Instant.ofEpochMilli(firstArrival), firstArrival - until.toEpochMilli());
            report(target.domain(LIMITED), until, firstArrival);
            assertThat(firstArrival).as("no delivery to %s before its suspension ended", LIMITED)
                .isGreaterThanOrEqualTo(until.toEpochMilli());
            assertThat(target.domain(LIMITED).accepted()).as("duplicates").isEqualTo(PER_DOMAIN);
            assertThat(admin.lane(LIMITED).get("suspended").asBoolean()).isFalse();

            target.domain(BUSY).behave(Behaviour.accept());
            LaneJames.awaitOrFail(() -> target.domain(BUSY).messageIds().containsAll(ids(BUSY)), "every mail to " + BUSY,
                TIMEOUT, james);
            assertThat(target.domain(BUSY).accepted()).as("duplicates").isEqualTo(PER_DOMAIN);
            assertThat(target.domain(OK).accepted()).as("duplicates").isEqualTo(PER_DOMAIN);
        }
    }

    /**
     * lanes-shaping.md and .png: from the suspension's start (its end minus its length) to the last
     * connection opened to the domain before its end, and from its end to the first connection and the
     * first mail after it.
     */
    private static void report(DomainSmtpTarget.Domain domain, Instant until, long firstArrival) throws java.io.IOException {
        long end = until.toEpochMilli();
        long start = end - SUSPEND_SECONDS * 1000L;
        java.util.List<Long> opens = domain.connectionOpenTimes();
        long lastBefore = opens.stream().filter(t -> t < end).mapToLong(Long::longValue).max().orElse(start);
        long firstAfter = opens.stream().filter(t -> t >= end).mapToLong(Long::longValue).min().orElse(-1);
        ReportChart chart = ReportChart.bars(String.format("%s: a %d s suspension by replyRule1", LIMITED, SUSPEND_SECONDS), null,
                "ms (negative: before the event)")
            .bar("ms", "suspension start -> last connection opened before its end", lastBefore - start)
            .bar("ms", "suspension end -> first connection opened", firstAfter < 0 ? 0 : firstAfter - end)
            .bar("ms", "suspension end -> first mail arrived", firstArrival - end);
        LaneReport.write("shaping", String.format("# Reply-driven suspension and its expiry (ReplyTextRuleE2ETest)%n%n"
                + "%s suspended %d s by replyRule1 (ends %s). Last connection opened before the end: %+d ms from the"
                + " suspension's start (%d connections opened in all); first connection after the end: %s; first mail"
                + " after the end: %+d ms. Load average at the end: %.1f on %d cores.%n",
                LIMITED, SUSPEND_SECONDS, until, lastBefore - start, opens.size(),
                firstAfter < 0 ? "none" : String.format("%+d ms", firstAfter - end), firstArrival - end,
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors()),
            chart, "time from the suspension to the last connection, from its expiry to the first connection and mail");
    }

    /** Both 451 domains dedicated; retries every 300 ms; the rule as a mailet parameter in mailetcontainer.xml. */
    private static JamesConf laneDelivery(JamesConf conf, int targetPort) {
        return LaneConf.laneDelivery(conf,
            "<dedicatedDomains>" + LIMITED + ", " + BUSY + "</dedicatedDomains>",
            "<buckets>4</buckets>",
            "<concurrency>2</concurrency>",
            "<port>" + targetPort + "</port>",
            "<retryDelays>300</retryDelays>",
            "<maxAttempts>1000</maxAttempts>",
            "<replyRule1>code=4xx; text=rate limited|too many connections; suspendAfterFailures=3;"
                + " suspendWindowMillis=60000; suspendForMillis=" + SUSPEND_SECONDS * 1000 + "</replyRule1>");
    }

    private static Set<String> ids(String domain) {
        return IntStream.range(0, PER_DOMAIN).mapToObj(i -> SmtpLoadSender.messageId("rule-" + domain, i))
            .collect(Collectors.toCollection(TreeSet::new));
    }
}
