package org.jameskvs.james.repository.orset;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;

/**
 * Where reading a node's log goes on: its copies (the own log: the write handle) with a position
 * each, the nodes known to hold none, and which of the copies are read: the {@link #members} (the
 * in-sync copies named by the log's newest replication record, see {@link NodeLogs#refreshMembers}).
 */
final class LogCursor {
    final String name;
    final boolean own;
    final Map<String, Copy> copies = new ConcurrentHashMap<>();
    final Set<String> absent = ConcurrentHashMap.newKeySet();
    long lastRescan = System.nanoTime();
    /** The copies read (and checked by garbage collection); null until the records told. */
    volatile Set<String> members;
    /** The last look at the records found every copy they name in sync: absence on them all means gone. */
    volatile boolean membersComplete;
    /** When the records were last read (System.nanoTime). */
    volatile long membersAt;
    /** The members are DAMAGED copies (no intact one): said once, when it starts. */
    volatile boolean readingDamaged;

    LogCursor(String name, boolean own) {
        this.name = name;
        this.own = own;
    }

    /**
     * The copies that hold the log are all known and open here: every copy the newest record names in
     * sync (the own log: its write handle). What none of them holds is gone from the log.
     */
    boolean complete() {
        Set<String> m = members;
        return m != null && membersComplete && copies.keySet().containsAll(m);
    }

    /** The copies to read now: the members' (none while the members are unknown). */
    List<Copy> memberCopies() {
        Set<String> m = members;
        if (m == null) {
            return List.of();
        }
        return copies.values().stream().filter(c -> m.contains(c.node)).toList();
    }

    /**
     * One copy of a log and where reading it goes on. A position only means something in the
     * {@link ReadResult#positionSpace()} it was read in.
     */
    static final class Copy {
        static final int NO_SPACE = Integer.MIN_VALUE;

        final String node;
        volatile KvsQueue handle;
        long position;
        int space = NO_SPACE;

        Copy(String node, KvsQueue handle) {
            this.node = node;
            this.handle = handle;
        }
    }
}
