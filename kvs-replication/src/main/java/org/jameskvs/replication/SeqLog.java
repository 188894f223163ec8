package org.jameskvs.replication;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The writer's log of one queue's mutations since one of its copies left (its node lost on both
 * paths while the other copy stayed in sync): what lets that copy, when it comes back, be caught up
 * by the suffix it missed instead of being CLEARed and copied in full (see {@link CatchUp}).
 *
 * <p>It starts at the surviving copy's (seq, digest) when the copy left and takes, in seq order,
 * every sequenced mutation the survivor answers after that: per seq the digest a copy holding it
 * has ({@link org.jameskvs.protocol.ContentDigest}), and for the mutations a catch-up must replay
 * on the returning copy (DELETE, REPLACE, a replacing PUT, CLEAR, each applied) the id and the
 * REPLACE state. Plain PUTs keep only their digest (8 bytes): the catch-up copies their messages
 * from the survivor, by position (a PUT's position is its seq). Never a body.
 *
 * <p>Memory: no log while both copies are in sync; arrays grown on demand from a small start; at
 * most {@code limit} entries ({@code replication.catchUpLogEntries}): one more and the log is given
 * up (the copy is then rebuilt in full); freed when the copy is caught up, rebuilt or replaced.
 */
final class SeqLog {
    /** A mutation to replay on the returning copy (applied on the survivor at {@code seq}). */
    record Change(long seq, NodeOp kind, byte[] id, int priority, long notBefore, byte[] state) {
    }

    private static final int FIRST_CAPACITY = 64;

    /** The node of the copy that left. */
    final String node;
    /** The surviving copy, whose answers the log follows (the catch-up's source). */
    final Member survivor;
    final long baseSeq;
    final long baseDigest;
    private final int limit;
    private long[] digests = new long[0];
    private int size;
    private final List<Change> changes = new ArrayList<>(0);

    SeqLog(String node, Member survivor, long baseSeq, long baseDigest, int limit) {
        this.node = node;
        this.survivor = survivor;
        this.baseSeq = baseSeq;
        this.baseDigest = baseDigest;
        this.limit = limit;
    }

    long lastSeq() {
        return baseSeq + size;
    }

    long lastDigest() {
        return size == 0 ? baseDigest : digests[size - 1];
    }

    int size() {
        return size;
    }

    /**
     * The mutation at {@link #lastSeq()} + 1 and the digest after it; {@code change} null for a
     * plain PUT or a refusal (nothing to replay). @return false when the log is full: give it up.
     */
    boolean append(long digestAfter, Change change) {
        if (size >= limit) {
            return false;
        }
        if (size == digests.length) {
            digests = Arrays.copyOf(digests, Math.min(limit, Math.max(FIRST_CAPACITY, size * 2)));
        }
        digests[size++] = digestAfter;
        if (change != null) {
            changes.add(change);
        }
        return true;
    }

    /** A copy holding {@code seq} with {@code digest} holds what the survivor held at that seq. */
    boolean matches(long seq, long digest) {
        if (seq < baseSeq || seq > lastSeq()) {
            return false;
        }
        return (seq == baseSeq ? baseDigest : digests[(int) (seq - baseSeq - 1)]) == digest;
    }

    /** The changes to replay on a copy at {@code fromSeq} to bring it to {@code toSeq}, in order. */
    List<Change> changesAfter(long fromSeq, long toSeq) {
        List<Change> out = new ArrayList<>();
        for (Change c : changes) {
            if (c.seq() > fromSeq && c.seq() <= toSeq) {
                out.add(c);
            }
        }
        return out;
    }

    /** Entries the arrays have room for (memory test). */
    int capacity() {
        return digests.length;
    }

    @Override
    public String toString() {
        return "log of " + node + " seq " + baseSeq + ".." + lastSeq() + " (" + changes.size() + " to replay)";
    }
}
