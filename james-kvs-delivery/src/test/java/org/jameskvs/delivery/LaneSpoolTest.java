package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import org.apache.mailet.Mail;
import org.jameskvs.delivery.target.Behaviour;
import org.jameskvs.delivery.target.DomainSmtpTarget;
import org.junit.jupiter.api.Test;

/**
 * The lanes in one JVM, on James's in-memory mail queues (the KVS queues are the end-to-end test's):
 * a destination answering 421 to everything is suspended and gets nothing, and one that never sends
 * its greeting holds no more than its lane's connections, while every mail to the
 * other destinations arrives once, with no destination seeing more connections at once than the lane
 * limit; the 421 destination's mail stays queued and arrives after it recovers and the lane resumes.
 */
class LaneSpoolTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final int CONCURRENCY = 2;

    @Test
    void a421DestinationIsSuspendedAndDoesNotStopTheOthers() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("busy.test", Behaviour.refuse421());
        behaviours.put("slow.test", Behaviour.slowData(Duration.ofMillis(50)));
        behaviours.put("stall.test", Behaviour.stallGreeting());
        for (int i = 0; i < 8; i++) {
            behaviours.put("ok" + i + ".test", Behaviour.accept());
        }
        List<Mail> bounced = new CopyOnWriteArrayList<>();
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config(
                "dedicatedDomains", "busy.test,slow.test,stall.test", "buckets", "4", "concurrency", String.valueOf(CONCURRENCY),
                "port", String.valueOf(target.port()), "retryDelays", "100", "maxAttempts", "1000",
                "suspendAfterFailures", "3", "suspendWindowMillis", "60000", "suspendForMillis", "3600000",
                "greetingTimeoutMillis", "5000", "idleConnectionMillis", "1000");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> bounced.add(mail), registry)) {
                int busyMails = 60;
                for (int i = 0; i < busyMails; i++) {
                    spool.enqueue(TestMails.mail("busy-" + i, TestMails.messageId("busy", i), "r" + i + "@busy.test"));
                }
                LaneState busyLane = registry.find("busy.test").orElseThrow();
                await(() -> busyLane.suspension().suspendedUntil() != null, "the 421 lane suspended");
                await(() -> busyLane.stats().inFlight() == 0, "the 421 lane's deliveries ended");
                long busyConnections = target.domain("busy.test").connections();

                Map<String, Set<String>> expected = new LinkedHashMap<>();
                int perDomain = 40;
                for (int i = 0; i < perDomain; i++) {
                    for (DomainSmtpTarget.Domain domain : target.domains()) {
                        if (domain.name().equals("busy.test")) {
                            continue;
                        }
                        if (domain.name().equals("stall.test")) { // never greets: its mails wait, nobody waits for them
                            spool.enqueue(TestMails.mail("stall-" + i, TestMails.messageId("stall", i), "r" + i + "@stall.test"));
                            continue;
                        }
                        String id = TestMails.messageId(domain.name(), i);
                        expected.computeIfAbsent(domain.name(), d -> new HashSet<>()).add(id);
                        spool.enqueue(TestMails.mail(domain.name() + "-" + i, id, "r" + i + "@" + domain.name()));
                    }
                }
                // one mail for two domains: split into one mail per lane
                String both = TestMails.messageId("both", 0);
                spool.enqueue(TestMails.mail("both", both, "x@ok0.test", "y@ok1.test"));
                expected.get("ok0.test").add(both);
                expected.get("ok1.test").add(both);

                await(() -> expected.entrySet().stream()
                    .allMatch(e -> target.domain(e.getKey()).messageIds().containsAll(e.getValue())), "every healthy mail delivered");

                for (Map.Entry<String, Set<String>> e : expected.entrySet()) {
                    DomainSmtpTarget.Domain domain = target.domain(e.getKey());
                    assertThat(domain.messageIds()).as(e.getKey()).isEqualTo(e.getValue());
                    assertThat(domain.accepted()).as("duplicates at %s", e.getKey()).isEqualTo(e.getValue().size());
                    assertThat(domain.maxConcurrentConnections()).as("connections at once to %s", e.getKey())
                        .isLessThanOrEqualTo(CONCURRENCY);
                }
                assertThat(target.domain("ok0.test").connections()).as("connections reused")
                    .isLessThan(perDomain);
                assertThat(target.domain("busy.test").accepted()).isZero();
                assertThat(target.domain("stall.test").accepted()).isZero();
                assertThat(target.domain("stall.test").maxConcurrentConnections()).isLessThanOrEqualTo(CONCURRENCY);
                assertThat(target.domain("busy.test").connections()).as("connections to a suspended lane")
                    .isEqualTo(busyConnections);
                assertThat(target.domain("busy.test").maxConcurrentConnections()).isLessThanOrEqualTo(CONCURRENCY);
                // Nothing of the 421 destination lost: proven below, when every one of its mails arrives once.
                // (James's memory queue sizes exclude mail its reader has buffered: no exact count here.)
                assertThat(bounced).isEmpty();

                // It recovers; an administrator resumes the lane: all its mail arrives.
                target.domain("busy.test").behave(Behaviour.accept());
                busyLane.suspension().resume();
                Set<String> busyIds = new HashSet<>();
                for (int i = 0; i < busyMails; i++) {
                    busyIds.add(TestMails.messageId("busy", i));
                }
                await(() -> target.domain("busy.test").messageIds().containsAll(busyIds), "the resumed lane delivered");
                await(() -> busyLane.queueSize().getAsLong() == 0, "the resumed lane's queue empty");
                assertThat(target.domain("busy.test").accepted()).isEqualTo(busyMails);
                LaneView view = LaneView.of(busyLane);
                assertThat(view.suspensions()).isEqualTo(1);
                assertThat(view.deferred()).isGreaterThanOrEqualTo(3);
            }
        }
    }

    @Test
    void aPermanentRefusalGoesToTheBouncePathAndLeavesTheQueue() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("gone.test", Behaviour.refuse421());
        List<Mail> bounced = new CopyOnWriteArrayList<>();
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            LaneDeliveryConfig config = TestConfigs.config("buckets", "1", "port", String.valueOf(target.port()),
                "retryDelays", "50", "maxAttempts", "3", "suspendAfterFailures", "100");
            LaneRegistry registry = new LaneRegistry();
            try (LaneSpool spool = TestSpools.start(config, target, (mail, reply) -> bounced.add(mail), registry)) {
                spool.enqueue(TestMails.mail("m", TestMails.messageId("gone", 0), "r@gone.test"));
                LaneState lane = registry.find("gone.test").orElseThrow();
                await(() -> bounced.size() == 1 && lane.queueSize().getAsLong() == 0, "bounced after 3 attempts");
                assertThat(target.domain("gone.test").connections()).isEqualTo(3);
                assertThat(bounced.get(0).getErrorMessage()).contains("421");
                assertThat(new ArrayList<>(bounced.get(0).getRecipients()).get(0).asString()).isEqualTo("r@gone.test");
            }
        }
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("not within " + TIMEOUT + ": " + what);
            }
            Thread.sleep(20);
        }
    }
}
