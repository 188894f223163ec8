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
    /** Who ordered, per key with an order given a reason (a reply rule); else an administrator. */
    private final Map<String, String> reasons = new ConcurrentHashMap<>();

    BounceOrders(Clock clock) {
        this.clock = clock;
    }

    /** Orders mail of {@code domainOrWholeLane} bounced for {@code duration} from now. */
    public void order(String domainOrWholeLane, Duration duration) {
        order(domainOrWholeLane, duration, null);
    }

    /** The same, ordered for {@code reason} (a reply rule), which the bounces then say instead of "an administrator's order". */
    public void order(String domainOrWholeLane, Duration duration, String reason) {
        String key = domainOrWholeLane.toLowerCase(Locale.ROOT);
        if (reason == null) {
            reasons.remove(key);
        } else {
            reasons.put(key, reason);
        }
        until.put(key, clock.instant().plus(duration));
    }

    public void cancel(String domainOrWholeLane) {
        until.remove(domainOrWholeLane.toLowerCase(Locale.ROOT));
        reasons.remove(domainOrWholeLane.toLowerCase(Locale.ROOT));
    }

    /** Why {@code domain}'s mail is bounced now: the rule's reason, or "an administrator's order". */
    public String reasonFor(String domain) {
        String key = active(WHOLE_LANE, clock.instant()) != null ? WHOLE_LANE : domain.toLowerCase(Locale.ROOT);
        return reasons.getOrDefault(key, "an administrator's order");
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
