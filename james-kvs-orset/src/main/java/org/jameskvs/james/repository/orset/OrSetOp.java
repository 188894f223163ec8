package org.jameskvs.james.repository.orset;

import java.util.Set;

/**
 * An operation of the OR-set, as written to a node's log and delivered to every replica.
 * Every operation carries a unique {@link Tag}; applying one is idempotent and commutes with every
 * other operation (see {@link OrSet}).
 */
public sealed interface OrSetOp<P> permits OrSetOp.Add, OrSetOp.Remove {

    /** The operation's unique id (for an ADD, the tag it adds). */
    Tag id();

    /**
     * Adds {@code key} under the fresh tag {@code tag}. {@code supersedes} are the tags of the same
     * key its source had observed: a store replaces the previous mail of the key (the paper's
     * "store" = remove m_old and add m_new, in one operation). {@code timestamp} (source wall clock,
     * ms) only picks which of several concurrently added versions a retrieve returns.
     */
    record Add<P>(String key, Tag tag, long timestamp, Set<Tag> supersedes, P payload) implements OrSetOp<P> {
        public Add {
            supersedes = Set.copyOf(supersedes);
        }

        @Override
        public Tag id() {
            return tag;
        }
    }

    /** Removes the given tags: those its source had observed (observed-remove). */
    record Remove<P>(Tag id, Set<Tag> tags) implements OrSetOp<P> {
        public Remove {
            tags = Set.copyOf(tags);
        }
    }
}
