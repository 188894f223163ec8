package org.jameskvs.james.repository.orset;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;

/**
 * Where reading a node's log goes on: its copies (the own log: the write handle) with a position
 * each, and the nodes known to hold none.
 */
final class LogCursor {
    final String name;
    final boolean own;
    final Map<String, Copy> copies = new ConcurrentHashMap<>();
    final Set<String> absent = ConcurrentHashMap.newKeySet();
    long lastRescan = System.nanoTime();

    LogCursor(String name, boolean own) {
        this.name = name;
        this.own = own;
    }

    /** Every node answered: it holds a copy (open here) or none. */
    boolean complete(List<String> nodes) {
        if (copies.isEmpty()) {
            return false;
        }
        for (String node : nodes) {
            if (!copies.containsKey(node) && !absent.contains(node)) {
                return false;
            }
        }
        return true;
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
