package org.jameskvs.server.storage;

import java.util.Arrays;

/**
 * In-memory index of one queue's live messages in position order (FlashQ's "MIN table"): parallel
 * primitive arrays, one slot per message, so a live message costs about 44 bytes of arrays plus its
 * {@link LiveIdTable} bucket, and no object. Bodies, ids and states stay in the journal.
 *
 * <p>Slots [head, tail) are in use; a deleted message keeps its slot with location 0 until the
 * arrays are compacted (deletes are mostly at the head of a spool queue, which simply advances
 * {@code head}). Positions grow with slots, except while recovery replays COPY records of messages
 * whose original PUT file is gone, and on a copy being rebuilt (its copy PUTs carry the source's
 * positions, below those of the mutations it takes live meanwhile): those are appended out of
 * order, and {@link #sortIfNeeded()} restores the order once replay ends or, on a live queue, at
 * the first use of the order ({@link #lowerBound}, {@link #firstPosition}; slot numbers change
 * then, so no caller keeps a slot across them).
 */
final class QueueIndex {
    private long[] positions;
    /** Journal location of the PUT/COPY record; 0 = dead slot. */
    private long[] locations;
    /** Journal location of the latest REPLACE, 0 when none. */
    private long[] stateLocations;
    private long[] notBefores;
    private int[] recordLengths;
    private int[] bodyLengths;
    private int[] hashes;
    private final LiveIdTable ids;
    private int head;
    private int tail;
    private int live;
    private long liveBytes;
    private boolean sorted = true;
    private long earliest = Long.MAX_VALUE;
    private boolean earliestValid = true;

    QueueIndex() {
        allocate(16);
        ids = new LiveIdTable(16);
    }

    private void allocate(int cap) {
        positions = new long[cap];
        locations = new long[cap];
        stateLocations = new long[cap];
        notBefores = new long[cap];
        recordLengths = new int[cap];
        bodyLengths = new int[cap];
        hashes = new int[cap];
    }

    int size() {
        return live;
    }

    long bytes() {
        return liveBytes;
    }

    int head() {
        return head;
    }

    int tail() {
        return tail;
    }

    boolean isLive(int slot) {
        return locations[slot] != 0;
    }

    long position(int slot) {
        return positions[slot];
    }

    long location(int slot) {
        return locations[slot];
    }

    long stateLocation(int slot) {
        return stateLocations[slot];
    }

    long notBefore(int slot) {
        return notBefores[slot];
    }

    int recordLength(int slot) {
        return recordLengths[slot];
    }

    int bodyLength(int slot) {
        return bodyLengths[slot];
    }

    /** Position of the first live message, or {@code fallback} when empty. */
    long firstPosition(long fallback) {
        if (!sorted) {
            sortIfNeeded();
        }
        return live == 0 ? fallback : positions[head];
    }

    /**
     * notBefore 0 means "ready at once": such messages are not delayed and do not count, so deleting
     * ordinary ready mail never forces the O(n) rescan below.
     */
    private boolean isDelayed(int slot) {
        return notBefores[slot] > 0;
    }

    /** Smallest notBefore &gt; 0 among live messages, Long.MAX_VALUE when none is delayed. */
    long earliestNotBefore() {
        if (!earliestValid) {
            long min = Long.MAX_VALUE;
            for (int s = head; s < tail; s++) {
                if (locations[s] != 0 && notBefores[s] > 0 && notBefores[s] < min) {
                    min = notBefores[s];
                }
            }
            earliest = min;
            earliestValid = true;
        }
        return earliest;
    }

    int find(int hash, LiveIdTable.SlotMatcher matcher) {
        return ids.find(hash, hashes, matcher);
    }

    /** Replay lookup: position is unique in a queue, so hash + position identify the message. */
    int findByPosition(int hash, long position) {
        return ids.find(hash, hashes, s -> positions[s] == position);
    }

    int append(long position, long location, int recordLength, int bodyLength, long notBefore, int hash) {
        if (tail == positions.length) {
            makeRoom();
        }
        int s = tail++;
        if (s > head && positions[s - 1] >= position) {
            sorted = false;
        }
        positions[s] = position;
        locations[s] = location;
        stateLocations[s] = 0;
        notBefores[s] = notBefore;
        recordLengths[s] = recordLength;
        bodyLengths[s] = bodyLength;
        hashes[s] = hash;
        ids.insert(hash, s, hashes);
        live++;
        liveBytes += bodyLength;
        if (notBefore > 0 && notBefore < earliest) {
            earliest = notBefore;
        }
        return s;
    }

    void kill(int slot) {
        ids.remove(hashes[slot], slot, hashes);
        locations[slot] = 0;
        stateLocations[slot] = 0;
        live--;
        liveBytes -= bodyLengths[slot];
        if (isDelayed(slot) && notBefores[slot] <= earliest) {
            earliestValid = false;
        }
        while (head < tail && locations[head] == 0) {
            head++;
        }
        if (live == 0) {
            head = 0;
            tail = 0;
        }
    }

    void relocate(int slot, long location, int recordLength, long notBefore) {
        locations[slot] = location;
        recordLengths[slot] = recordLength;
        stateLocations[slot] = 0;
        setNotBefore(slot, notBefore);
    }

    void replaceState(int slot, long stateLocation, long notBefore) {
        stateLocations[slot] = stateLocation;
        setNotBefore(slot, notBefore);
    }

    private void setNotBefore(int slot, long notBefore) {
        if (isDelayed(slot) && notBefores[slot] <= earliest) {
            earliestValid = false;
        }
        notBefores[slot] = notBefore;
        if (earliestValid && notBefore > 0 && notBefore < earliest) {
            earliest = notBefore;
        }
    }

    /** First slot in [head, tail) with position &gt;= {@code from} (live or not), by binary search. */
    int lowerBound(long from) {
        if (!sorted) {
            sortIfNeeded();
        }
        int lo = head;
        int hi = tail;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (positions[mid] < from) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * Whether a live message has this position (one binary search). Not known while the order is
     * not restored (a copy being rebuilt): false then, rather than a sort per call.
     */
    boolean hasLivePosition(long position) {
        if (!sorted) {
            return false;
        }
        int s = lowerBound(position);
        return s < tail && positions[s] == position && locations[s] != 0;
    }

    void clear() {
        head = 0;
        tail = 0;
        live = 0;
        liveBytes = 0;
        sorted = true;
        earliest = Long.MAX_VALUE;
        earliestValid = true;
        ids.clear();
        if (positions.length > 1024) {
            allocate(16);
        }
    }

    /** Squeezes out dead slots; grows when the live ones fill more than 3/4 of the arrays. */
    private void makeRoom() {
        int cap = positions.length;
        int newCap = live + 1 > cap * 3 / 4 ? Math.max(16, cap + (cap >> 1)) : cap;
        compactInto(newCap);
    }

    private void compactInto(int newCap) {
        long[] p = positions;
        long[] l = locations;
        long[] sl = stateLocations;
        long[] nb = notBefores;
        int[] rl = recordLengths;
        int[] bl = bodyLengths;
        int[] h = hashes;
        if (newCap != positions.length) {
            allocate(newCap);
        }
        int j = 0;
        for (int s = head; s < tail; s++) {
            if (l[s] != 0) {
                positions[j] = p[s];
                locations[j] = l[s];
                stateLocations[j] = sl[s];
                notBefores[j] = nb[s];
                recordLengths[j] = rl[s];
                bodyLengths[j] = bl[s];
                hashes[j] = h[s];
                j++;
            }
        }
        if (locations == l) {
            Arrays.fill(locations, j, tail, 0L);
        }
        head = 0;
        tail = j;
        ids.rebuild(hashes, locations, 0, tail, live);
    }

    /**
     * End of replay: drops the slots of messages deleted during replay (arrays sized for the live
     * ones plus a quarter) and restores position order if COPY records came out of order.
     */
    void sortIfNeeded() {
        if (positions.length > 1024 && positions.length > live + (live >> 1)) {
            compactInto(Math.max(16, live + (live >> 2)));
        }
        if (sorted) {
            return;
        }
        compactInto(positions.length);
        Integer[] order = new Integer[tail];
        for (int i = 0; i < tail; i++) {
            order[i] = i;
        }
        long[] p = positions.clone();
        Arrays.sort(order, (a, b) -> Long.compare(p[a], p[b]));
        long[] l = locations.clone();
        long[] sl = stateLocations.clone();
        long[] nb = notBefores.clone();
        int[] rl = recordLengths.clone();
        int[] bl = bodyLengths.clone();
        int[] h = hashes.clone();
        for (int i = 0; i < tail; i++) {
            int s = order[i];
            positions[i] = p[s];
            locations[i] = l[s];
            stateLocations[i] = sl[s];
            notBefores[i] = nb[s];
            recordLengths[i] = rl[s];
            bodyLengths[i] = bl[s];
            hashes[i] = h[s];
        }
        ids.rebuild(hashes, locations, 0, tail, live);
        sorted = true;
    }

    /** Takes over another index's content (replay: a placeholder queue gets its name). */
    void adoptFrom(QueueIndex o) {
        positions = o.positions;
        locations = o.locations;
        stateLocations = o.stateLocations;
        notBefores = o.notBefores;
        recordLengths = o.recordLengths;
        bodyLengths = o.bodyLengths;
        hashes = o.hashes;
        head = o.head;
        tail = o.tail;
        live = o.live;
        liveBytes = o.liveBytes;
        sorted = o.sorted;
        earliestValid = false;
        ids.rebuild(hashes, locations, head, tail, live);
    }
}
