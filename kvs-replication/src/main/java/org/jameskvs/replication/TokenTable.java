package org.jameskvs.replication;

import io.netty.util.collection.LongObjectHashMap;

/**
 * The state machine's requests awaiting an answer, by token. Tokens are issued in increasing order
 * and answered almost in order (one TCP connection per node path), so the table is a ring over the
 * window of recent tokens ({@code token & mask} is the slot: a put and a remove touch one slot,
 * neighbouring tokens share cache lines). A token that falls behind the window (never answered for
 * a long time, or issued long before it was registered) moves to an overflow hash map. A hash map
 * alone cost 10 % of the replication thread at 400k requests/s: every put and remove missed the cache
 * on two random slots, and removals shifted probe clusters.
 *
 * <p>Single-threaded (the state machine's thread).
 */
final class TokenTable<V> {
    private static final int MAX_RING = 1 << 20;

    private Object[] ring = new Object[4096];
    private int mask = ring.length - 1;
    /** The oldest token the ring covers: the window is [base, base + ring.length). */
    private long base;
    private int inRing;
    private final LongObjectHashMap<V> overflow = new LongObjectHashMap<>();

    void put(long token, V value) {
        if (token < base) {
            overflow.put(token, value);
            return;
        }
        if (token >= base + ring.length) {
            makeRoom(token);
            if (token < base) {
                overflow.put(token, value);
                return;
            }
        }
        int slot = (int) token & mask;
        if (ring[slot] == null) {
            inRing++;
        }
        ring[slot] = value;
    }

    @SuppressWarnings("unchecked")
    V remove(long token) {
        if (token >= base && token < base + ring.length) {
            int slot = (int) token & mask;
            Object v = ring[slot];
            if (v != null) {
                ring[slot] = null;
                inRing--;
            }
            return (V) v;
        }
        return overflow.isEmpty() ? null : overflow.remove(token);
    }

    int size() {
        return inRing + overflow.size();
    }

    /** Slides (or grows) the window so that {@code token} fits. */
    private void makeRoom(long token) {
        while (inRing > ring.length / 2 && ring.length < MAX_RING) {
            grow();
        }
        long newBase = token - ring.length + 1;
        if (newBase - base >= ring.length) {
            // Jumped past the whole window: whatever is still in it moves to the overflow.
            spill(base, base + ring.length);
        } else {
            spill(base, newBase);
        }
        base = Math.max(base, newBase);
    }

    /** Moves the entries of tokens [from, to) out of the ring (they fall behind the window). */
    @SuppressWarnings("unchecked")
    private void spill(long from, long to) {
        for (long t = from; t < to && inRing > 0; t++) {
            int slot = (int) t & mask;
            Object v = ring[slot];
            if (v != null) {
                ring[slot] = null;
                inRing--;
                overflow.put(t, (V) v);
            }
        }
    }

    private void grow() {
        Object[] bigger = new Object[ring.length * 2];
        int biggerMask = bigger.length - 1;
        for (long t = base; t < base + ring.length; t++) {
            Object v = ring[(int) t & mask];
            if (v != null) {
                bigger[(int) t & biggerMask] = v;
            }
        }
        ring = bigger;
        mask = biggerMask;
    }
}
