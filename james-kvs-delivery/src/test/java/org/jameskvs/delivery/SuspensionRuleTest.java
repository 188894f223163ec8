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
}
