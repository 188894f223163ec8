package org.jameskvs.delivery;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A traffic shaping rule on SMTP replies: "{@code threshold} replies of a destination that match
 * within {@code window} suspend that destination for {@code suspendFor}" (its dedicated lane, or the
 * tail domain alone in its bucket, as the built-in 421 rule does; the suspension expires by itself).
 * A reply matches when every part the rule names matches:
 * <ul>
 * <li>{@code code}: the reply code, three characters where {@code x} stands for any digit ({@code 421},
 * {@code 45x}, {@code 4xx});</li>
 * <li>{@code enhancedCode}: the RFC 3463 enhanced status code the reply text starts with, whole
 * ({@code 4.7.1}) or its first parts ({@code 4.7} matches 4.7.0, 4.7.1, ...);</li>
 * <li>{@code text}: a Java regular expression found anywhere in the reply text (enhanced code included),
 * case-insensitive, so a plain phrase such as {@code too many connections} is a substring match.</li>
 * </ul>
 * The replies a rule sees: a failed connection's (greeting, a 421 at any point) and every negative
 * reply of a transaction once (each RCPT refused, also in a transaction that delivered to the other
 * recipients, and the deciding MAIL, DATA or end-of-DATA reply).
 * Replies made up for a failure that got none (connect refused, timeout) never match. With
 * {@code action=bounce} the rule, at its threshold, orders the destination's mail bounced (queued or
 * arriving, as an administrator's bounce order does) for {@code bounceForMillis} (an alias of
 * {@code suspendForMillis}) instead of suspending it. With {@code action=throttle} it paces the
 * destination at {@code maxMessageRate} mails/s at most for {@code throttleForMillis} (same alias):
 * a dedicated lane's rate, or a tail domain alone in its bucket (its neighbours are not slowed); with
 * {@code sharedLimits} the rate is shared by demand among the nodes that throttle the destination.
 * Configured as
 * {@code replyRule1}, {@code replyRule2}, ... in {@link LaneDeliveryConfig}, each
 * {@code key=value} pairs separated by {@code ;} (so a text cannot contain {@code ;}), e.g.
 * {@code code=4xx; text=rate limited|too many connections; suspendAfterFailures=3;
 * suspendWindowMillis=300000; suspendForMillis=600000}; the last three default to the lane-wide
 * settings of the same name.
 */
public record ReplyRule(String name, String code, String enhancedCode, Pattern text, int threshold, Duration window,
                        Duration suspendFor, Action action, double rate) {
    /**
     * What a rule does at its threshold, for {@code suspendFor}: suspend the destination, order its mail
     * bounced, or pace its lane at {@code rate} mails/s at most.
     */
    public enum Action { SUSPEND, BOUNCE, THROTTLE }

    private static final Pattern CODE = Pattern.compile("[2-5][0-9x][0-9x]");
    private static final Pattern ENHANCED = Pattern.compile("[245](\\.[0-9]{1,3}){0,2}");
    private static final Pattern LEADING_ENHANCED = Pattern.compile("^([245]\\.[0-9]{1,3}\\.[0-9]{1,3})(?:\\s|$)");

    public ReplyRule {
        if (code == null && enhancedCode == null && text == null) {
            throw new IllegalArgumentException(name + " must name a code, an enhancedCode or a text to match");
        }
        if (threshold < 1) {
            throw new IllegalArgumentException(name + ": suspendAfterFailures must be at least 1, was " + threshold);
        }
        if (action == Action.THROTTLE && !(rate > 0 && Double.isFinite(rate))) {
            throw new IllegalArgumentException(name + ": action=throttle needs maxMessageRate, a positive number of mails per second");
        }
        if (window.isNegative() || suspendFor.isNegative() || suspendFor.isZero()) {
            throw new IllegalArgumentException(name + ": suspendWindowMillis must not be negative and suspendForMillis (bounceForMillis) must be positive");
        }
    }

    /** Whether {@code reply} matches every part this rule names. */
    public boolean matches(SmtpReply reply) {
        if (reply == null || reply.code() == 0) {
            return false;
        }
        if (code != null && !codeMatches(String.valueOf(reply.code()))) {
            return false;
        }
        if (enhancedCode != null) {
            String actual = enhancedCodeOf(reply);
            if (actual == null || !(actual.equals(enhancedCode) || actual.startsWith(enhancedCode + "."))) {
                return false;
            }
        }
        return text == null || text.matcher(reply.text()).find();
    }

    private boolean codeMatches(String actual) {
        for (int i = 0; i < 3; i++) {
            if (code.charAt(i) != 'x' && code.charAt(i) != actual.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** The enhanced status code the reply's text starts with ("4.7.1"), or null. */
    static String enhancedCodeOf(SmtpReply reply) {
        Matcher matcher = LEADING_ENHANCED.matcher(reply.text());
        return matcher.find() ? matcher.group(1) : null;
    }

    /**
     * Parses {@code spec} ({@code key=value; ...}) as the rule called {@code name}; thresholds absent from
     * it are the lane-wide ones given.
     */
    public static ReplyRule parse(String name, String spec, int defaultThreshold, Duration defaultWindow,
                                  Duration defaultSuspendFor) {
        String code = null;
        String enhanced = null;
        Pattern text = null;
        int threshold = defaultThreshold;
        Duration window = defaultWindow;
        Duration suspendFor = defaultSuspendFor;
        Action action = Action.SUSPEND;
        double rate = 0;
        for (String part : spec.split(";")) {
            if (part.isBlank()) {
                continue;
            }
            int equals = part.indexOf('=');
            if (equals < 0) {
                throw new IllegalArgumentException(name + ": '" + part.strip() + "' is not key=value");
            }
            String key = part.substring(0, equals).strip();
            String value = part.substring(equals + 1).strip();
            switch (key) {
                case "code" -> {
                    code = value.toLowerCase(Locale.ROOT);
                    if (!CODE.matcher(code).matches()) {
                        throw new IllegalArgumentException(name + ": code must be three characters such as 421 or 4xx, was '" + value + "'");
                    }
                }
                case "enhancedCode" -> {
                    enhanced = value;
                    if (!ENHANCED.matcher(enhanced).matches()) {
                        throw new IllegalArgumentException(name + ": enhancedCode must be such as 4.7.1 or 4.7, was '" + value + "'");
                    }
                }
                case "text" -> {
                    try {
                        text = Pattern.compile(value, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
                    } catch (PatternSyntaxException e) {
                        throw new IllegalArgumentException(name + ": text is not a regular expression: " + e.getMessage(), e);
                    }
                }
                case "suspendAfterFailures" -> threshold = number(name, key, value);
                case "suspendWindowMillis" -> window = Duration.ofMillis(number(name, key, value));
                case "maxMessageRate" -> {
                    try {
                        rate = Double.parseDouble(value);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(name + ": maxMessageRate must be a number of mails per second, was '" + value + "'", e);
                    }
                }
                case "suspendForMillis", "bounceForMillis", "throttleForMillis" -> suspendFor = Duration.ofMillis(number(name, key, value));
                case "action" -> {
                    try {
                        action = Action.valueOf(value.toUpperCase(Locale.ROOT));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(name + ": action must be suspend, bounce or throttle, was '" + value + "'", e);
                    }
                }
                default -> throw new IllegalArgumentException(name + ": unknown key '" + key
                    + "' (code, enhancedCode, text, suspendAfterFailures, suspendWindowMillis, suspendForMillis, action, bounceForMillis, maxMessageRate, throttleForMillis)");
            }
        }
        return new ReplyRule(name, code, enhanced, text, threshold, window, suspendFor, action, rate);
    }

    private static int number(String name, String key, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": " + key + " must be an integer, was '" + value + "'", e);
        }
    }

    @Override
    public String toString() {
        return name + " (" + (code == null ? "" : "code " + code + " ") + (enhancedCode == null ? "" : "enhanced " + enhancedCode + " ")
            + (text == null ? "" : "text /" + text.pattern() + "/ ") + threshold + " in " + window.toMillis() + " ms -> "
            + action.name().toLowerCase(Locale.ROOT) + (action == Action.THROTTLE ? " to " + rate + "/s" : "") + " "
            + suspendFor.toMillis() + " ms)";
    }
}
