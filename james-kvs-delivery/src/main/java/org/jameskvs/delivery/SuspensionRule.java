package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A lane's reply-driven suspension: "{@code threshold} failures (a 421 reply, or a connect or greeting
 * failure) within {@code window} suspend the lane for {@code duration}". A suspended lane opens no
 * connection; the suspension ends by itself when it expires (or by {@link #resume}). An administrator
 * can also suspend for a chosen duration. Thread-safe.
 */
public final class SuspensionRule {
    private final int threshold;
    private final Duration window;
    private final Duration duration;
    private final Clock clock;
    private final Deque<Instant> failures = new ArrayDeque<>();
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
        Instant now = clock.instant();
        failures.addLast(now);
        while (!failures.isEmpty() && failures.peekFirst().isBefore(now.minus(window))) {
            failures.removeFirst();
        }
        if (failures.size() >= threshold && !isSuspended(now)) {
            failures.clear();
            suspend(now, duration, threshold + " failures within " + window.toMillis() + " ms, last: " + reply);
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
