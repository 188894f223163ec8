package org.jameskvs.delivery;

import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The reply rules' throttles of a bucket's tail domains on this node: each throttled domain is paced
 * on its own ({@link RatePacer}), so that its bucket neighbours are not (a dedicated lane's throttle
 * is its lane's: {@link LaneStats#throttle}). At most {@link #MAX_DOMAINS} throttled at once per
 * bucket (about 200 bytes each; an expired one is forgotten when room is needed or when looked up);
 * beyond that a new throttle is not applied (logged by the caller).
 */
final class DomainThrottles {
    static final int MAX_DOMAINS = 10_000;

    /** One tail domain's throttle: its rate cap until when, why, and its own pacer. */
    static final class Throttle {
        volatile double rate;
        volatile long untilMillis;
        volatile String reason;
        final Lane share;
        final RatePacer pacer;

        Throttle(double rate, long untilMillis, String reason, Lane share, Function<Throttle, RatePacer> pacer) {
            this.rate = rate;
            this.untilMillis = untilMillis;
            this.reason = reason;
            this.share = share;
            this.pacer = pacer.apply(this);
        }
    }

    private final Map<String, Throttle> byDomain = new ConcurrentHashMap<>();

    /**
     * Throttles {@code domain} at {@code rate} mails/s until {@code untilMillis} (an active throttle gets
     * the new rate and end, and keeps its pacer); {@code share} names the throttle where nodes share its
     * rate, {@code pacer} makes its pacer. False when {@link #MAX_DOMAINS} other domains are throttled.
     */
    boolean throttle(String domain, double rate, long untilMillis, String reason, long nowMillis, Lane share,
                     Function<Throttle, RatePacer> pacer) {
        String key = domain.toLowerCase(Locale.ROOT);
        if (byDomain.size() >= MAX_DOMAINS && !byDomain.containsKey(key)) {
            byDomain.values().removeIf(t -> nowMillis >= t.untilMillis);
            if (byDomain.size() >= MAX_DOMAINS) {
                return false;
            }
        }
        byDomain.compute(key, (d, active) -> {
            if (active == null || nowMillis >= active.untilMillis) {
                return new Throttle(rate, untilMillis, reason, share, pacer);
            }
            active.rate = rate;
            active.untilMillis = untilMillis;
            active.reason = reason;
            return active;
        });
        return true;
    }

    /** {@code domain}'s throttle active at {@code nowMillis}, or null. */
    Throttle active(String domain, long nowMillis) {
        if (byDomain.isEmpty()) {
            return null;
        }
        String key = domain.toLowerCase(Locale.ROOT);
        Throttle throttle = byDomain.get(key);
        if (throttle == null) {
            return null;
        }
        if (nowMillis >= throttle.untilMillis) {
            byDomain.remove(key, throttle);
            return null;
        }
        return throttle;
    }

    /** The tail domains throttled at {@code nowMillis}: "rate/s until end". */
    Map<String, String> active(long nowMillis) {
        Map<String, String> active = new TreeMap<>();
        byDomain.forEach((domain, t) -> {
            if (nowMillis < t.untilMillis) {
                active.put(domain, t.rate + "/s until " + Instant.ofEpochMilli(t.untilMillis));
            }
        });
        return active;
    }
}
