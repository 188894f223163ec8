package org.jameskvs.delivery.target;

import java.time.Duration;

/**
 * How the test target answers for one domain: accept everything; answer 421 to everything (at the
 * greeting); never send the greeting; wait before answering the end of DATA; or accept at most N
 * connections at once (421 at the greeting beyond that). PIPELINING is offered unless
 * {@link #withoutPipelining()}.
 */
public record Behaviour(Kind kind, int maxConnections, Duration dataDelay, boolean pipelining) {
    public enum Kind { ACCEPT, REFUSE_421, STALL_GREETING, SLOW_DATA, MAX_CONNECTIONS }

    /** Offering PIPELINING in the EHLO reply. */
    public Behaviour(Kind kind, int maxConnections, Duration dataDelay) {
        this(kind, maxConnections, dataDelay, true);
    }

    /** The same, without PIPELINING in the EHLO reply. */
    public Behaviour withoutPipelining() {
        return new Behaviour(kind, maxConnections, dataDelay, false);
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
