package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** "3 failures in 5 minutes suspend for 10 minutes", on a hand-moved clock. */
class SuspensionRuleTest {
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
    private final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    private final SuspensionRule rule = new SuspensionRule(3, Duration.ofMinutes(5), Duration.ofMinutes(10), clock);
    private final SmtpReply busy = new SmtpReply(421, "busy");

    private void advance(Duration by) {
        now.set(now.get().plus(by));
    }

    @Test
    void thresholdWithinTheWindowSuspendsUntilExpiry() {
        assertThat(rule.recordFailure(busy)).isFalse();
        advance(Duration.ofMinutes(2));
        assertThat(rule.recordFailure(busy)).isFalse();
        assertThat(rule.remaining()).isZero();
        advance(Duration.ofMinutes(2));
        assertThat(rule.recordFailure(busy)).isTrue();
        assertThat(rule.remaining()).isEqualTo(Duration.ofMinutes(10));
        assertThat(rule.reason()).contains("421 busy");
        advance(Duration.ofMinutes(9));
        assertThat(rule.remaining()).isEqualTo(Duration.ofMinutes(1));
        advance(Duration.ofMinutes(1));
        assertThat(rule.remaining()).isZero();
        assertThat(rule.suspendedUntil()).isNull();
        assertThat(rule.suspensions()).isEqualTo(1);
    }

    @Test
    void failuresOlderThanTheWindowDoNotCount() {
        rule.recordFailure(busy);
        rule.recordFailure(busy);
        advance(Duration.ofMinutes(6));
        assertThat(rule.recordFailure(busy)).isFalse();
        assertThat(rule.remaining()).isZero();
    }

    @Test
    void anAdministratorSuspendsAndResumes() {
        rule.suspend(Duration.ofHours(1), "by hand");
        assertThat(rule.remaining()).isEqualTo(Duration.ofHours(1));
        assertThat(rule.reason()).isEqualTo("by hand");
        rule.resume();
        assertThat(rule.remaining()).isZero();
    }

    @Test
    void aReplyTextRuleCountsOnlyMatchingRepliesThreeInFiveMinutesAndExpires() {
        LaneDeliveryConfig config = TestConfigs.config("replyRule1",
            "text=too many connections|rate limited; suspendAfterFailures=3; suspendWindowMillis=300000; suspendForMillis=120000");
        ReplyRule textRule = config.replyRules().get(0);
        SmtpReply limited = new SmtpReply(451, "4.7.1 Rate limited, try again later");
        SmtpReply other = new SmtpReply(451, "4.3.0 mailbox busy");
        assertThat(rule.recordMatch(textRule, limited)).isFalse();
        assertThat(rule.recordMatch(textRule, other)).isFalse();
        assertThat(rule.recordMatch(textRule, other)).isFalse();
        advance(Duration.ofMinutes(2));
        assertThat(rule.recordMatch(textRule, new SmtpReply(421, "4.7.0 too many connections from your IP"))).isFalse();
        assertThat(rule.remaining()).as("two matches so far: the other replies do not count").isZero();
        advance(Duration.ofMinutes(4)); // the first match is out of the 5 min window
        assertThat(rule.recordMatch(textRule, limited)).isFalse();
        assertThat(rule.recordMatch(textRule, limited)).isTrue();
        assertThat(rule.remaining()).isEqualTo(Duration.ofMinutes(2));
        assertThat(rule.reason()).contains("replyRule1").contains("Rate limited");
        assertThat(rule.recordFailure(busy)).as("the built-in 421 rule counts apart").isFalse();
        advance(Duration.ofMinutes(2));
        assertThat(rule.remaining()).as("expired").isZero();
        assertThat(rule.suspensions()).isEqualTo(1);
        assertThat(rule.recordMatch(textRule, limited)).as("counting starts again after a suspension").isFalse();
    }

    @Test
    void eachReplyRuleHasItsOwnThresholdAndDuration() {
        LaneDeliveryConfig config = TestConfigs.config("suspendForMillis", "60000",
            "replyRule1", "enhancedCode=4.7; suspendAfterFailures=1",
            "replyRule2", "code=45x; suspendAfterFailures=2; suspendForMillis=600000");
        SmtpReply policy = new SmtpReply(550, "5.7.1 rejected by policy");
        SmtpReply throttled = new SmtpReply(421, "4.7.0 throttled");
        assertThat(rule.recordMatch(config.replyRules().get(1), throttled)).isFalse(); // 421 is not 45x
        assertThat(rule.recordMatch(config.replyRules().get(0), policy)).isFalse(); // 5.7.1 is not 4.7.x
        assertThat(rule.recordMatch(config.replyRules().get(0), throttled)).isTrue();
        assertThat(rule.remaining()).as("the lane-wide suspendForMillis").isEqualTo(Duration.ofMinutes(1));
    }
}
