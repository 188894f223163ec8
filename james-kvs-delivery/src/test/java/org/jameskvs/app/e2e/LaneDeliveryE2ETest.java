package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.WebAdmin;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Issue 13's isolation promise on real parts: two KVS server processes (every lane queue has two
 * copies), a real James 3.8.1 whose relay processor uses LaneDelivery, and the per-domain SMTP target
 * reached through James's DNS service (a test zone: each domain on its own 127.0.0.x). One domain
 * answers 421 to everything: its lane is suspended, it receives nothing, and every mail to the six
 * healthy domains arrives exactly once, with no domain ever seeing more connections at once than the
 * lane limit. Its mail is all kept in its lane queue (KVS sizes count mail in delivery); an
 * administrator resumes the lane once the domain recovers and every one of its mails arrives once.
 */
class LaneDeliveryE2ETest {
    private static final int CONCURRENCY = 2;
    private static final int PER_DOMAIN = Integer.getInteger("lanes.e2e.perDomain", 100);
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final String BUSY = "busy.test";

    @Test
    void a421DomainGetsNothingAndDoesNotStopTheOthers() throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve("lanes-" + System.currentTimeMillis());
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put(BUSY, Behaviour.refuse421());
        for (int i = 0; i < 6; i++) {
            behaviours.put("ok" + i + ".test", Behaviour.accept());
        }
        Files.createDirectories(run);
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            try (KvsServerProcess node1 = KvsServerProcess.start(run.resolve("kvs-node1"));
                 KvsServerProcess node2 = KvsServerProcess.start(run.resolve("kvs-node2"));
                 JamesProcess james = LaneJames.start(run.resolve("james"), target, conf -> laneDelivery(conf
                     .kvsReplicated(node1.address(), node2.address(), KvsServerProcess.PASSWORD), target.port()))) {
                LaneAdmin admin = new LaneAdmin(james.webadminPort());
                WebAdmin webAdmin = new WebAdmin(james.webadminPort());
                SmtpLoadSender sender = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000);

                SmtpLoadSender.Result busySent = sender.send(PER_DOMAIN, 4, "rcpt@" + BUSY, "e2e-" + BUSY);
                assertThat(busySent.accepted()).as(busySent.summary()).isEqualTo(PER_DOMAIN);
                Map<String, Set<String>> expected = new LinkedHashMap<>();
                for (DomainSmtpTarget.Domain domain : target.domains()) {
                    if (!domain.name().equals(BUSY)) {
                        SmtpLoadSender.Result sent = sender.send(PER_DOMAIN, 4, "rcpt@" + domain.name(), "e2e-" + domain.name());
                        assertThat(sent.accepted()).as(sent.summary()).isEqualTo(PER_DOMAIN);
                        expected.put(domain.name(), ids("e2e-" + domain.name()));
                    }
                }

                awaitOrFail(() -> expected.entrySet().stream()
                    .allMatch(e -> target.domain(e.getKey()).messageIds().containsAll(e.getValue())),
                    "every mail to the healthy domains delivered", james);
                JsonNode busyLane = admin.lane(BUSY);
                awaitOrFail(() -> {
                    JsonNode lane = admin.lane(BUSY);
                    return lane.get("suspended").asBoolean() && lane.get("inFlight").asInt() == 0
                        && lane.get("queued").asLong() == PER_DOMAIN;
                }, "the 421 lane suspended, nothing in delivery, its " + PER_DOMAIN + " mails in its queue (retries back"
                    + " from the delay queue): " + admin.lane(BUSY), james);
                busyLane = admin.lane(BUSY);
                System.out.printf("LaneDeliveryE2ETest: %d mails to each of %d healthy domains delivered; %s lane: %s%n",
                    PER_DOMAIN, expected.size(), BUSY, busyLane);

                for (Map.Entry<String, Set<String>> e : expected.entrySet()) {
                    DomainSmtpTarget.Domain domain = target.domain(e.getKey());
                    assertThat(domain.messageIds()).as(e.getKey()).isEqualTo(e.getValue());
                    assertThat(domain.accepted()).as("duplicates at %s", e.getKey()).isEqualTo(PER_DOMAIN);
                }
                for (DomainSmtpTarget.Domain domain : target.domains()) {
                    assertThat(domain.maxConcurrentConnections()).as("connections at once to %s", domain.name())
                        .isLessThanOrEqualTo(CONCURRENCY);
                }
                assertThat(target.domain("ok0.test").connections()).as("connections reused for ok0.test")
                    .isLessThan(PER_DOMAIN);
                assertThat(target.domain(BUSY).accepted()).isZero();
                assertThat(busyLane.get("queued").asLong()).as("the 421 domain's mail kept in its lane queue")
                    .isEqualTo(PER_DOMAIN);
                assertThat(webAdmin.queueSize("lane-delay-00")).as("retries parked in the first delay queue").isZero();
                assertThat(busyLane.get("lane").asText()).isEqualTo("lane-d-" + BUSY);
                assertThat(busyLane.get("currentLimit").asInt()).as("backed off to one connection").isEqualTo(1);
                Set<String> tailLanes = new TreeSet<>();
                for (int i = 1; i < 6; i++) {
                    tailLanes.add(admin.lane("ok" + i + ".test").get("lane").asText());
                }
                assertThat(tailLanes).as("the premise of the backlog hook's marks: one tail domain per bucket").hasSize(5);

                // Receipt regulation: the suspended lane holds PER_DOMAIN mails, so its domain is refused (452), others not.
                awaitOrFail(() -> probe(james, BUSY, "refused") == 452, "RCPT to the backlogged lane answered 452", james);
                long connectionsWhileSuspended = target.domain(BUSY).connections();
                assertThat(webAdmin.queueSize("spool")).isZero();

                // It recovers; an administrator resumes the lane: every one of its mails arrives, once.
                target.domain(BUSY).behave(Behaviour.accept());
                assertThat(target.domain(BUSY).connections()).as("no connection while suspended")
                    .isEqualTo(connectionsWhileSuspended);
                admin.resume(BUSY);
                Set<String> busyIds = ids("e2e-" + BUSY);
                awaitOrFail(() -> target.domain(BUSY).messageIds().containsAll(busyIds), "the resumed lane delivered", james);
                awaitOrFail(() -> admin.lane(BUSY).get("queued").asLong() == 0, "the resumed lane queue empty", james);
                assertThat(target.domain(BUSY).accepted()).as("duplicates at %s", BUSY).isEqualTo(PER_DOMAIN);

                String metrics = webAdmin.get("/metrics");
                assertThat(metrics).contains("laneDelivered:lane_d_ok0_test " + PER_DOMAIN + ".0");
                assertThat(metrics).contains("laneSuspended:lane_d_busy_test 0.0");

                // Drained below the low-water mark: its domain is accepted again.
                awaitOrFail(() -> probe(james, BUSY, "accepted-again") == 250, "RCPT to the drained lane accepted", james);

                assertThat(admin.status("PUT", "/lanes/" + BUSY + "/suspension?duration=soon")).isEqualTo(400);
                assertThat(admin.status("GET", "/lanes/no-such-lane-d-x")).isEqualTo(200); // a domain name: its bucket
                JsonNode ok1Bucket = admin.suspend("ok1.test", "1h"); // a tail domain: suspended alone in its bucket
                assertThat(ok1Bucket.get("suspended").asBoolean()).isFalse();
                assertThat(ok1Bucket.get("suspendedDomains").has("ok1.test")).isTrue();
                assertThat(admin.suspend("ok0.test", "1h").get("suspended").asBoolean()).isTrue(); // its dedicated lane
                assertThat(admin.lanes().size()).isEqualTo(2 + 16);
                assertThat(admin.send("PUT", "/lanes/ok2.test/bounce?duration=1h").get("bounceOrders").has("ok2.test")).isTrue();
                assertThat(admin.send("DELETE", "/lanes/ok2.test/bounce").get("bounceOrders").has("ok2.test")).isFalse();
            }
        }
    }

    /**
     * LaneDelivery in place of RemoteDelivery (busy.test and ok0.test dedicated, 16 buckets, in which
     * ok1..ok5 fall in five different ones), its route, and LaneBacklogHook refusing a lane's domains at
     * PER_DOMAIN queued mails (so only the suspended lane, which keeps all its mail, can reach it).
     * The lane limits are shared through the first KVS node (sharedLimits): James's wiring of it.
     */
    private static JamesConf laneDelivery(JamesConf conf, int targetPort) {
        LaneConf.backlogHook(conf, PER_DOMAIN, 10);
        return LaneConf.laneDelivery(conf,
            "<dedicatedDomains>" + BUSY + ", ok0.test</dedicatedDomains>",
            "<buckets>16</buckets>",
            "<concurrency>" + CONCURRENCY + "</concurrency>",
            "<port>" + targetPort + "</port>",
            "<retryDelays>500</retryDelays>",
            "<maxAttempts>1000</maxAttempts>",
            "<suspendAfterFailures>3</suspendAfterFailures>",
            "<suspendForMillis>3600000</suspendForMillis>",
            "<greetingTimeoutMillis>10000</greetingTimeoutMillis>",
            "<sharedLimits>true</sharedLimits>");
    }

    private static int probeCount;

    /** One mail to {@code domain}; the SMTP code of the first refusal, or 250. */
    private static int probe(JamesProcess james, String domain, String tag) throws Exception {
        String to = "probe@" + domain;
        try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 60_000)) {
            return client.send(SmtpLoadSender.FROM, to,
                SmtpClient.message(SmtpLoadSender.FROM, to, SmtpLoadSender.messageId("probe-" + tag, probeCount++), tag));
        }
    }

    private static Set<String> ids(String prefix) {
        return IntStream.range(0, PER_DOMAIN).mapToObj(i -> SmtpLoadSender.messageId(prefix, i))
            .collect(Collectors.toCollection(TreeSet::new));
    }

    private static void awaitOrFail(LaneJames.Check check, String what, JamesProcess james) throws Exception {
        LaneJames.awaitOrFail(check, what, TIMEOUT, james);
    }
}
