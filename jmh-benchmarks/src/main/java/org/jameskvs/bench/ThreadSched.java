package org.jameskvs.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Who ran and who waited for a CPU during a span of a benchmark (Linux): per thread of the
 * benchmark's own processes, its CPU time and its time <em>runnable but waiting for a CPU</em>
 * ({@code /proc/<pid>/task/<tid>/schedstat}: run ns, run-queue wait ns, time slices), and the
 * machine's CPU time used by everything else ({@code /proc/stat} minus ours). A latency tail the
 * servers' own meters cannot explain shows here as threads of the request path (the client's
 * replication core, the servers' I/O threads) that were ready to run and waited for a core.
 */
final class ThreadSched {
    /** One thread's cumulative counters. */
    record Counters(String process, String thread, long runNanos, long waitNanos, long slices) {
    }

    /** One reading: per (pid, tid) counters, and the machine's busy CPU time. */
    record Snapshot(long nanoTime, Map<String, Counters> threads, long machineBusyNanos) {
    }

    private ThreadSched() {
    }

    /** @param processes label -> pid (the benchmark's own JVM as {@code ProcessHandle.current().pid()}) */
    static Snapshot take(Map<String, Long> processes) {
        Map<String, Counters> threads = new HashMap<>();
        for (Map.Entry<String, Long> p : processes.entrySet()) {
            Path tasks = Path.of("/proc", Long.toString(p.getValue()), "task");
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(tasks)) {
                for (Path t : ds) {
                    try {
                        String[] s = Files.readString(t.resolve("schedstat")).trim().split("\\s+");
                        String comm = Files.readString(t.resolve("comm")).trim();
                        threads.put(p.getValue() + "/" + t.getFileName(), new Counters(p.getKey(), comm,
                                Long.parseLong(s[0]), Long.parseLong(s[1]), Long.parseLong(s[2])));
                    } catch (IOException | RuntimeException gone) {
                        // the thread ended meanwhile
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux, or the process is gone: nothing to tell
            }
        }
        return new Snapshot(System.nanoTime(), threads, machineBusyNanos());
    }

    /** CPU time all cores spent not idle (user, nice, system, irq, softirq, steal), since boot. */
    private static long machineBusyNanos() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                if (i != 4 && i != 5) { // idle, iowait
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy * 10_000_000L; // USER_HZ = 100
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** CPU time the JIT compiler threads (C1, C2) of the read processes used between two readings. */
    static long compilerNanos(Snapshot before, Snapshot after) {
        long sum = 0;
        for (Map.Entry<String, Counters> e : after.threads().entrySet()) {
            if (e.getValue().thread().contains("CompilerThre")) {
                Counters b = before.threads().get(e.getKey());
                sum += e.getValue().runNanos() - (b == null ? 0 : b.runNanos());
            }
        }
        return sum;
    }

    /**
     * Lines for the span between two readings: per process its CPU and its threads' total wait for a
     * CPU; the threads that ran or waited most; and what the rest of the machine used.
     */
    static List<String> describe(Snapshot before, Snapshot after, int topThreads) {
        double span = (after.nanoTime() - before.nanoTime()) / 1e9;
        Map<String, long[]> perProcess = new LinkedHashMap<>();
        List<Object[]> rows = new ArrayList<>();
        long ours = 0;
        for (Map.Entry<String, Counters> e : after.threads().entrySet()) {
            Counters a = e.getValue();
            Counters b = before.threads().get(e.getKey());
            long run = a.runNanos() - (b == null ? 0 : b.runNanos());
            long wait = a.waitNanos() - (b == null ? 0 : b.waitNanos());
            long slices = a.slices() - (b == null ? 0 : b.slices());
            ours += run;
            long[] p = perProcess.computeIfAbsent(a.process(), k -> new long[3]);
            p[0] += run;
            p[1] += wait;
            p[2] += slices;
            rows.add(new Object[]{a.process() + ":" + a.thread(), run, wait, slices});
        }
        List<String> out = new ArrayList<>();
        StringBuilder procs = new StringBuilder(String.format("CPU over %.1f s (run / waited runnable for a CPU):", span));
        perProcess.forEach((k, v) -> procs.append(String.format(" %s %.2f / %.2f s (%,d switches);", k, v[0] / 1e9, v[1] / 1e9, v[2])));
        long machine = after.machineBusyNanos() - before.machineBusyNanos();
        procs.append(String.format(" everything else on the machine %.2f s of %d cores x %.1f s", Math.max(0, machine - ours) / 1e9,
                Runtime.getRuntime().availableProcessors(), span));
        out.add(procs.toString());
        rows.sort((x, y) -> Long.compare((long) y[1] + (long) y[2], (long) x[1] + (long) x[2]));
        StringBuilder top = new StringBuilder("threads (run / wait ms):");
        for (int i = 0; i < Math.min(topThreads, rows.size()); i++) {
            Object[] r = rows.get(i);
            top.append(String.format(" %s %.0f / %.0f;", r[0], (long) r[1] / 1e6, (long) r[2] / 1e6));
        }
        out.add(top.toString());
        return out;
    }
}
