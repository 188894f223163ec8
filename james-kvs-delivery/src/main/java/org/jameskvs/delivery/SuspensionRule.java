package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * A lane's reply-driven suspension: "{@code threshold} failures (a 421 reply, or a connect or greeting
 * failure) within {@code window} suspend the lane for {@code duration}". A suspended lane opens no
 * connection; the suspension ends by itself when it expires (or by {@link #resume}). An administrator
 * can also suspend for a chosen duration. The configured {@link ReplyRule}s count their matching replies
 * here too, each with its own threshold, window and duration ({@link #recordMatch}). Thread-safe.
 */
public final class SuspensionRule {
    private final int threshold;
    private final Duration window;
    private final Duration duration;
    private final Clock clock;
    private final Deque<Instant> failures = new ArrayDeque<>();
    /** Matching replies within its window, per reply rule (by name); created on a rule's first match. */
    private final Map<String, Deque<Instant>> matches = new HashMap<>();
    private Instant suspendedUntil = Instant.MIN;
    private String reason = "";
    private long suspensions;

    public SuspensionRule(int threshold, Duration window, Duration duration, Clock clock) {
        this.threshold = threshold;
        this.window = window;
        this.duration = duration;
        this.clock = clock;
    }

    /** Counts a failure; returns true when it made the lane suspended. */
    public synchronized boolean recordFailure(SmtpReply reply) {
        return count(failures, threshold, window, duration, reply, "");
    }

    /**
     * Counts {@code reply} for {@code rule} when it matches; returns true when it reached the rule's
     * threshold: a suspending rule has then suspended the lane (for the rule's duration); a bouncing or
     * throttling rule leaves the action to the caller (and counts anew).
     */
    public synchronized boolean recordMatch(ReplyRule rule, SmtpReply reply) {
        if (!rule.matches(reply)) {
            return false;
        }
        Deque<Instant> seen = matches.computeIfAbsent(rule.name(), name -> new ArrayDeque<>());
        if (rule.action() != ReplyRule.Action.SUSPEND) {
            Instant now = clock.instant();
            seen.addLast(now);
            while (!seen.isEmpty() && seen.peekFirst().isBefore(now.minus(rule.window()))) {
                seen.removeFirst();
            }
            if (seen.size() >= rule.threshold()) {
                seen.clear();
                return true;
            }
            return false;
        }
        return count(seen, rule.threshold(), rule.window(), rule.suspendFor(), reply, " of " + rule);
    }

    private boolean count(Deque<Instant> seen, int atLeast, Duration within, Duration suspendFor, SmtpReply reply, String what) {
        Instant now = clock.instant();
        seen.addLast(now);
        while (!seen.isEmpty() && seen.peekFirst().isBefore(now.minus(within))) {
            seen.removeFirst();
        }
        if (seen.size() >= atLeast && !isSuspended(now)) {
            seen.clear();
            suspend(now, suspendFor, atLeast + " failures" + what + " within " + within.toMillis() + " ms, last: " + reply);
            return true;
        }
        return false;
    }

    /** Suspends the lane for {@code forHowLong} from now (an administrator's decision, or the rule's). */
    public synchronized void suspend(Duration forHowLong, String why) {
        suspend(clock.instant(), forHowLong, why);
    }

    private void suspend(Instant now, Duration forHowLong, String why) {
        suspendedUntil = now.plus(forHowLong);
        reason = why;
        suspensions++;
    }

    public synchronized void resume() {
        suspendedUntil = Instant.MIN;
        reason = "";
    }

    /** Zero when the lane may open connections; else how long until its suspension ends. */
    public synchronized Duration remaining() {
        Instant now = clock.instant();
        return isSuspended(now) ? Duration.between(now, suspendedUntil) : Duration.ZERO;
    }

    private boolean isSuspended(Instant now) {
        return now.isBefore(suspendedUntil);
    }

    /** When the current suspension ends, or null when not suspended. */
    public synchronized Instant suspendedUntil() {
        return isSuspended(clock.instant()) ? suspendedUntil : null;
    }

    public synchronized String reason() {
        return isSuspended(clock.instant()) ? reason : "";
    }

    /** Suspensions started so far (rule or administrator). */
    public synchronized long suspensions() {
        return suspensions;
    }
}
