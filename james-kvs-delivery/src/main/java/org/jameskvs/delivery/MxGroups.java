package org.jameskvs.delivery;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Which MX group a tail domain belongs to (its best MX host, {@link MxResolver#mxGroup}), remembered
 * for {@code ttl} in a bounded cache so that routing a mail costs no DNS lookup most of the time. At
 * most {@code capacity} domains are remembered (least recently used first out): a bounded heap.
 */
final class MxGroups implements UnaryOperator<String> {
    private record Entry(String group, long expiresAt) {
    }

    private final UnaryOperator<String> lookup;
    private final Clock clock;
    private final Duration ttl;
    private final Map<String, Entry> cache;

    MxGroups(UnaryOperator<String> lookup, int capacity, Duration ttl, Clock clock) {
        this.lookup = lookup;
        this.clock = clock;
        this.ttl = ttl;
        this.cache = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
                return size() > capacity;
            }
        };
    }

    /** The group of {@code domain} (lower case). */
    @Override
    public String apply(String domain) {
        String key = domain.toLowerCase(Locale.ROOT);
        long now = clock.millis();
        synchronized (this) {
            Entry known = cache.get(key);
            if (known != null && known.expiresAt() > now) {
                return known.group();
            }
        }
        String group = lookup.apply(key).toLowerCase(Locale.ROOT); // outside the lock: a DNS query may be slow
        synchronized (this) {
            cache.put(key, new Entry(group, now + ttl.toMillis()));
        }
        return group;
    }
}
