package org.jameskvs.james.repository.orset;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.regex.Pattern;

/**
 * A globally unique OR-set tag: the James node that made the operation, a random number drawn when
 * that node's repository object started (so a restarted node never reuses a tag even though its
 * counter restarts) and a counter. Also the KVS message id of the operation ({@link #asId()}).
 * Tags are totally ordered (node, session, counter); the order only serves deterministic choices.
 */
public record Tag(String node, long session, long counter) implements Comparable<Tag> {
    private static final Pattern NODE = Pattern.compile("[A-Za-z0-9._@:-]{1,100}");
    private static final Comparator<Tag> ORDER = Comparator.comparing(Tag::node)
        .thenComparingLong(Tag::session).thenComparingLong(Tag::counter);

    public Tag {
        if (!validNode(node)) {
            throw new IllegalArgumentException("node id must match " + NODE.pattern() + ": " + node);
        }
    }

    public static boolean validNode(String node) {
        return node != null && NODE.matcher(node).matches();
    }

    /** The KVS message id: {@code node/session-hex/counter}, at most 100 + 35 bytes. */
    public String asId() {
        return node + "/" + Long.toHexString(session) + "/" + counter;
    }

    /** {@link #asId()} as the bytes of a KVS message id. */
    byte[] idBytes() {
        return asId().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public int compareTo(Tag other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return asId();
    }
}
