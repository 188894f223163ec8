package org.jameskvs.delivery.target;

import java.time.Duration;

/**
 * How the test target answers for one domain: accept everything; answer 421 to everything (at the
 * greeting); never send the greeting; wait before answering the end of DATA; accept at most N
 * connections at once (421 at the greeting beyond that); or answer every RCPT with a given reply
 * ({@link #rcptReply}, e.g. {@code 451 4.7.1 rate limited}). PIPELINING is offered unless
 * {@link #withoutPipelining()}.
 */
public record Behaviour(Kind kind, int maxConnections, Duration dataDelay, boolean pipelining, String rcptReply) {
    public enum Kind { ACCEPT, REFUSE_421, STALL_GREETING, SLOW_DATA, MAX_CONNECTIONS, RCPT_REPLY }

    /** Offering PIPELINING in the EHLO reply. */
    public Behaviour(Kind kind, int maxConnections, Duration dataDelay) {
        this(kind, maxConnections, dataDelay, true, "250 OK");
    }

    /** The same, without PIPELINING in the EHLO reply. */
    public Behaviour withoutPipelining() {
        return new Behaviour(kind, maxConnections, dataDelay, false, rcptReply);
    }

    /** Every RCPT answered {@code reply} (a full reply line: code, space, text); DATA then 554 (no recipient). */
    public static Behaviour rcptReply(String reply) {
        return new Behaviour(Kind.RCPT_REPLY, Integer.MAX_VALUE, Duration.ZERO, true, reply);
    }

    public static Behaviour accept() {
        return new Behaviour(Kind.ACCEPT, Integer.MAX_VALUE, Duration.ZERO);
    }

    public static Behaviour refuse421() {
        return new Behaviour(Kind.REFUSE_421, Integer.MAX_VALUE, Duration.ZERO);
    }

    public static Behaviour stallGreeting() {
        return new Behaviour(Kind.STALL_GREETING, Integer.MAX_VALUE, Duration.ZERO);
    }

    public static Behaviour slowData(Duration delay) {
        return new Behaviour(Kind.SLOW_DATA, Integer.MAX_VALUE, delay);
    }

    public static Behaviour maxConnections(int n) {
        return new Behaviour(Kind.MAX_CONNECTIONS, n, Duration.ZERO);
    }
}
