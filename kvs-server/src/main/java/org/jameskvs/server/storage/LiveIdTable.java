package org.jameskvs.server.storage;

import java.util.Arrays;

/**
 * Open-addressing table from a message id's 32-bit hash to the message's slot in its
 * {@link QueueIndex}: one {@code int} per bucket, no object per message (heap budget: ~8-16 bytes
 * per live message at load factor &lt;= 0.5). Ids themselves are not kept on the heap; a hash match
 * is confirmed by the caller (by reading the id back from the journal, or during replay by the
 * message position, which is unique in a queue). Linear probing with backward-shift deletion, so
 * there are no tombstones to clean up.
 */
final class LiveIdTable {
    /** Bucket content is slot + 1; 0 means empty. */
    private int[] buckets;
    private int mask;
    private int size;

    LiveIdTable(int expected) {
        int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        buckets = new int[cap];
        mask = cap - 1;
    }

    int size() {
        return size;
    }

    /** Mixes bytes into a well-spread 32-bit hash (Murmur3 finalizer over a polynomial hash). */
    static int hash(byte[] id, int off, int len) {
        int h = 0x9747b28c;
        for (int i = 0; i < len; i++) {
            h = 31 * h + id[off + i];
        }
        h ^= len;
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }

    interface SlotMatcher {
        boolean matches(int slot);
    }

    /** @return the slot whose hash equals {@code hash} and that {@code matcher} accepts, or -1. */
    int find(int hash, int[] slotHashes, SlotMatcher matcher) {
        int i = hash & mask;
        while (true) {
            int b = buckets[i];
            if (b == 0) {
                return -1;
            }
            int slot = b - 1;
            if (slotHashes[slot] == hash && matcher.matches(slot)) {
                return slot;
            }
            i = (i + 1) & mask;
        }
    }

    void insert(int hash, int slot, int[] slotHashes) {
        if ((size + 1) * 2 > buckets.length) {
            grow(slotHashes);
        }
        int i = hash & mask;
        while (buckets[i] != 0) {
            i = (i + 1) & mask;
        }
        buckets[i] = slot + 1;
        size++;
    }

    void remove(int hash, int slot, int[] slotHashes) {
        int i = hash & mask;
        while (buckets[i] != slot + 1) {
            if (buckets[i] == 0) {
                return;
            }
            i = (i + 1) & mask;
        }
        // Backward-shift: pull later entries of the cluster into the hole when their home allows it.
        int hole = i;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            int b = buckets[j];
            if (b == 0) {
                break;
            }
            int home = slotHashes[b - 1] & mask;
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                buckets[hole] = b;
                hole = j;
            }
        }
        buckets[hole] = 0;
        size--;
    }

    /** Rebuilds from scratch for the live slots (after the index moved its slots). */
    void rebuild(int[] slotHashes, long[] locations, int from, int to, int live) {
        int cap = Integer.highestOneBit(Math.max(16, live * 2 - 1)) << 1;
        if (cap != buckets.length) {
            buckets = new int[cap];
            mask = cap - 1;
        } else {
            Arrays.fill(buckets, 0);
        }
        size = 0;
        for (int s = from; s < to; s++) {
            if (locations[s] != 0) {
                int i = slotHashes[s] & mask;
                while (buckets[i] != 0) {
                    i = (i + 1) & mask;
                }
                buckets[i] = s + 1;
                size++;
            }
        }
    }

    private void grow(int[] slotHashes) {
        int[] old = buckets;
        buckets = new int[old.length * 2];
        mask = buckets.length - 1;
        for (int b : old) {
            if (b != 0) {
                int i = slotHashes[b - 1] & mask;
                while (buckets[i] != 0) {
                    i = (i + 1) & mask;
                }
                buckets[i] = b;
            }
        }
    }

    void clear() {
        buckets = new int[16];
        mask = 15;
        size = 0;
    }
}
