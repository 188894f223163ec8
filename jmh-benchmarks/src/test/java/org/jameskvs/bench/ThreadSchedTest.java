package org.jameskvs.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ThreadSchedTest {
    private static ThreadSched.Snapshot snapshot(long nanoTime, long machineBusy, ThreadSched.Counters... threads) {
        java.util.HashMap<String, ThreadSched.Counters> m = new java.util.HashMap<>();
        int tid = 1;
        for (ThreadSched.Counters c : threads) {
            m.put(c.process() + "/" + c.thread() + "/" + tid++, c);
        }
        return new ThreadSched.Snapshot(nanoTime, m, machineBusy);
    }

    @Test
    void compilerTimeCountsOnlyTheJitThreadsAndANewThreadFromZero() {
        ThreadSched.Snapshot before = new ThreadSched.Snapshot(0, Map.of(
                "1/10", new ThreadSched.Counters("client", "C2 CompilerThre", 100, 0, 1),
                "1/11", new ThreadSched.Counters("client", "kvs-replication", 100, 0, 1)), 0);
        ThreadSched.Snapshot after = new ThreadSched.Snapshot(1_000, Map.of(
                "1/10", new ThreadSched.Counters("client", "C2 CompilerThre", 400, 0, 2),
                "1/11", new ThreadSched.Counters("client", "kvs-replication", 900, 0, 2),
                "2/20", new ThreadSched.Counters("server1", "C1 CompilerThre", 50, 0, 1)), 0);
        assertEquals(300 + 50, ThreadSched.compilerNanos(before, after));
    }

    @Test
    void describesRunAndWaitPerProcessAndWhatTheRestOfTheMachineUsed() {
        ThreadSched.Snapshot before = snapshot(0, 0,
                new ThreadSched.Counters("client", "core", 0, 0, 0),
                new ThreadSched.Counters("server1", "io", 0, 0, 0));
        ThreadSched.Snapshot after = snapshot(1_000_000_000L, 3_000_000_000L,
                new ThreadSched.Counters("client", "core", 500_000_000L, 700_000_000L, 10),
                new ThreadSched.Counters("server1", "io", 250_000_000L, 100_000_000L, 5));
        List<String> lines = ThreadSched.describe(before, after, 8);
        assertTrue(lines.get(0).contains("client 0.50 / 0.70 s (10 switches)"), lines.get(0));
        assertTrue(lines.get(0).contains("server1 0.25 / 0.10 s (5 switches)"), lines.get(0));
        assertTrue(lines.get(0).contains("everything else on the machine 2.25 s"), lines.get(0));
        assertTrue(lines.get(1).startsWith("threads (run / wait ms): client:core 500 / 700;"), lines.get(1));
    }

    @Test
    void readsThisJvmsThreadsOnLinux() {
        ThreadSched.Snapshot s = ThreadSched.take(Map.of("self", ProcessHandle.current().pid()));
        assertFalse(s.threads().isEmpty());
        assertTrue(s.threads().values().stream().anyMatch(c -> c.runNanos() > 0));
        assertTrue(s.machineBusyNanos() > 0);
    }
}
