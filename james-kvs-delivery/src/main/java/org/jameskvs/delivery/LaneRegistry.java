package org.jameskvs.delivery;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import javax.inject.Singleton;

/**
 * The lanes of the running {@link LaneDelivery} mailet, shared with the webadmin route (one instance per
 * James: a just-in-time singleton, which Guice keeps in the top injector, so the mailet loader and the
 * route loader see the same one).
 */
@Singleton
public class LaneRegistry {
    private final Map<String, LaneState> lanes = new LinkedHashMap<>();
    private volatile LaneRouter router;
    private volatile TailDomainCounts tailCounts;

    /** The lanes of the running spool, with its tail domains' own counts ({@code null}: none kept). */
    public synchronized void register(LaneRouter router, Collection<LaneState> states, TailDomainCounts tailCounts) {
        this.router = router;
        this.tailCounts = tailCounts;
        lanes.clear();
        states.forEach(state -> lanes.put(state.lane().name(), state));
    }

    public synchronized Collection<LaneState> lanes() {
        return java.util.List.copyOf(lanes.values());
    }

    /**
     * What to suspend for {@code nameOrDomain}: a lane's own suspension when it names a lane, else that
     * recipient domain's (the lane's when the domain has a dedicated lane, its own in a bucket).
     */
    public synchronized Optional<SuspensionRule> suspensionFor(String nameOrDomain) {
        LaneState byName = lanes.get(nameOrDomain);
        if (byName != null) {
            return Optional.of(byName.suspension());
        }
        return find(nameOrDomain).map(state -> state.suspensionOf(nameOrDomain));
    }

    /**
     * {@code domain}'s own counts when it is a tail domain (carried by a bucket, not a lane's name), on
     * this node ({@link TailDomainCounts}); empty for a lane name or a dedicated domain.
     */
    public synchronized Optional<TailDomainCounts.View> tailDomain(String domain) {
        if (lanes.containsKey(domain) || router == null || tailCounts == null || router.laneOf(domain).dedicated()) {
            return Optional.empty();
        }
        return Optional.of(tailCounts.view(domain));
    }

    /** The lane named {@code nameOrDomain}, else the lane a recipient domain of that name goes to. */
    public synchronized Optional<LaneState> find(String nameOrDomain) {
        LaneState byName = lanes.get(nameOrDomain);
        if (byName != null || router == null) {
            return Optional.ofNullable(byName);
        }
        return Optional.ofNullable(lanes.get(router.laneOf(nameOrDomain).name()));
    }
}
