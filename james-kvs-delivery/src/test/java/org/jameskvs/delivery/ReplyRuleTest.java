package org.jameskvs.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** What a reply rule matches (code, enhanced code, text) and how it is read from the mailet's parameters. */
class ReplyRuleTest {
    private static ReplyRule rule(String spec) {
        return ReplyRule.parse("replyRule1", spec, 3, Duration.ofMinutes(5), Duration.ofMinutes(10));
    }

    @Test
    void codeWithWildcardDigits() {
        assertThat(rule("code=421").matches(new SmtpReply(421, "busy"))).isTrue();
        assertThat(rule("code=421").matches(new SmtpReply(451, "busy"))).isFalse();
        assertThat(rule("code=4xx").matches(new SmtpReply(451, "busy"))).isTrue();
        assertThat(rule("code=45x").matches(new SmtpReply(452, "busy"))).isTrue();
        assertThat(rule("code=45x").matches(new SmtpReply(421, "busy"))).isFalse();
        assertThat(rule("code=4XX").matches(new SmtpReply(550, "no"))).isFalse();
    }

    @Test
    void enhancedCodeWholeOrByItsFirstParts() {
        SmtpReply reply = new SmtpReply(451, "4.7.1 Please slow down");
        assertThat(rule("enhancedCode=4.7.1").matches(reply)).isTrue();
        assertThat(rule("enhancedCode=4.7").matches(reply)).isTrue();
        assertThat(rule("enhancedCode=4.7.10").matches(reply)).isFalse();
        assertThat(rule("enhancedCode=4.1").matches(reply)).isFalse();
        assertThat(rule("enhancedCode=4.7").matches(new SmtpReply(451, "Please slow down 4.7.1"))).as("not leading").isFalse();
        assertThat(ReplyRule.enhancedCodeOf(new SmtpReply(250, "2.0.0"))).isEqualTo("2.0.0");
    }

    @Test
    void textIsACaseInsensitiveRegexFoundAnywhere() {
        ReplyRule rule = rule("text=too many connections|rate limit(ed)?");
        assertThat(rule.matches(new SmtpReply(421, "4.7.0 Too many connections from 127.0.0.1"))).isTrue();
        assertThat(rule.matches(new SmtpReply(451, "4.7.1 You are RATE LIMITED"))).isTrue();
        assertThat(rule.matches(new SmtpReply(451, "4.3.0 mailbox busy"))).isFalse();
        assertThat(rule.matches(SmtpReply.noReply("rate limited (a made-up reply: connect failed)"))).isFalse();
    }

    @Test
    void everyNamedPartMustMatch() {
        ReplyRule rule = rule("code=421; enhancedCode=4.7.0; text=too many connections");
        assertThat(rule.matches(new SmtpReply(421, "4.7.0 too many connections"))).isTrue();
        assertThat(rule.matches(new SmtpReply(451, "4.7.0 too many connections"))).isFalse();
        assertThat(rule.matches(new SmtpReply(421, "4.4.5 too many connections"))).isFalse();
        assertThat(rule.matches(new SmtpReply(421, "4.7.0 service not available"))).isFalse();
    }

    @Test
    void thresholdsDefaultToTheLaneWideSettings() {
        LaneDeliveryConfig config = TestConfigs.config("suspendAfterFailures", "5", "suspendWindowMillis", "1000",
            "suspendForMillis", "2000", "replyRule1", "text=rate limited",
            "replyRule2", " code=4xx ; suspendAfterFailures=1;suspendWindowMillis=0; suspendForMillis=60000 ");
        assertThat(config.replyRules()).hasSize(2);
        ReplyRule first = config.replyRules().get(0);
        assertThat(first.threshold()).isEqualTo(5);
        assertThat(first.window()).isEqualTo(Duration.ofSeconds(1));
        assertThat(first.suspendFor()).isEqualTo(Duration.ofSeconds(2));
        ReplyRule second = config.replyRules().get(1);
        assertThat(second.name()).isEqualTo("replyRule2");
        assertThat(second.threshold()).isEqualTo(1);
        assertThat(second.suspendFor()).isEqualTo(Duration.ofMinutes(1));
        assertThat(first.action()).isEqualTo(ReplyRule.Action.SUSPEND);
        ReplyRule bounce = TestConfigs.config("replyRule1", "enhancedCode=4.7.1; action=Bounce; bounceForMillis=5000").replyRules().get(0);
        assertThat(bounce.action()).isEqualTo(ReplyRule.Action.BOUNCE);
        assertThat(bounce.suspendFor()).isEqualTo(Duration.ofSeconds(5));
        ReplyRule throttle = TestConfigs.config("replyRule1", "code=421; action=throttle; maxMessageRate=0.5; throttleForMillis=60000")
            .replyRules().get(0);
        assertThat(throttle.action()).isEqualTo(ReplyRule.Action.THROTTLE);
        assertThat(throttle.rate()).isEqualTo(0.5);
        assertThat(throttle.suspendFor()).isEqualTo(Duration.ofMinutes(1));
        assertThat(TestConfigs.config().replyRules()).isEmpty();
    }

    @Test
    void badRulesAreRefusedByName() {
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "suspendAfterFailures=2"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replyRule1 must name a code");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "code=4"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replyRule1: code must be");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "text=([unclosed"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("text is not a regular expression");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "txt=busy"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown key 'txt'");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "text=busy", "replyRule3", "text=slow"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replyRule3 without replyRule2");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "code=4xx; action=drop"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("action must be suspend, bounce or throttle");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "code=4xx; action=throttle"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("action=throttle needs maxMessageRate");
        assertThatThrownBy(() -> TestConfigs.config("replyRule1", "code=4xx; suspendForMillis=0"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("suspendForMillis (bounceForMillis) must be positive");
    }
}
