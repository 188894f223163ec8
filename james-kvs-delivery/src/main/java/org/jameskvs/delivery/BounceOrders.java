package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An administrator's orders to bounce a lane's mail (all of it, or one recipient domain's) until a
 * time: while an order is active, that mail, already queued or arriving, goes to the bounce path
 * instead of being delivered (KumoMTA's bounce API with a duration). Orders expire by themselves.
 */
public final class BounceOrders {
    /** The key of an order on the whole lane. */
    public static final String WHOLE_LANE = "*";

    private final Clock clock;
    private final Map<String, Instant> until = new ConcurrentHashMap<>();

    BounceOrders(Clock clock) {
        this.clock = clock;
    }

    /** Orders mail of {@code domainOrWholeLane} bounced for {@code duration} from now. */
    public void order(String domainOrWholeLane, Duration duration) {
        until.put(domainOrWholeLane.toLowerCase(Locale.ROOT), clock.instant().plus(duration));
    }

    public void cancel(String domainOrWholeLane) {
        until.remove(domainOrWholeLane.toLowerCase(Locale.ROOT));
    }

    /** The end of the order that applies to {@code domain}'s mail now, or null. */
    public Instant activeFor(String domain) {
        Instant now = clock.instant();
        Instant lane = active(WHOLE_LANE, now);
        return lane != null ? lane : active(domain.toLowerCase(Locale.ROOT), now);
    }

    private Instant active(String key, Instant now) {
        Instant end = until.get(key);
        if (end != null && !now.isBefore(end)) {
            until.remove(key, end);
            return null;
        }
        return end;
    }

    /** Active orders: domain (or {@value #WHOLE_LANE}) to their end. */
    public Map<String, String> active() {
        Instant now = clock.instant();
        Map<String, String> active = new TreeMap<>();
        until.forEach((key, end) -> {
            if (now.isBefore(end)) {
                active.put(key, end.toString());
            }
        });
        return active;
    }
}
