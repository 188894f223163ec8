package org.jameskvs.spoolbench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code /proc} says about a process (Linux): CPU time, resident memory, and, for a JVM, its heap
 * through {@code jcmd}.
 *
 * <p>CPU time of a process counts its own {@code utime+stime} and the {@code cutime+cstime} of children
 * it has reaped, plus the {@code utime+stime} of its live descendants. For the Postfix master this is
 * the whole mail system: smtpd, cleanup, qmgr, smtp, ... are its children, and the time of one that
 * exits moves from the live sum into the master's {@code cutime/cstime}, so the total never goes back.
 */
final class ProcStats {
    private final double clockTicksPerSecond;

    ProcStats(double clockTicksPerSecond) {
        this.clockTicksPerSecond = clockTicksPerSecond;
    }

    /** CPU seconds of {@code pid} and its descendants, as explained above; NaN when the process is gone. */
    double cpuSeconds(long pid) {
        long[] own = stat(pid);
        if (own == null) {
            return Double.NaN;
        }
        long ticks = own[0] + own[1] + own[2] + own[3];
        for (long child : descendants(pid)) {
            long[] s = stat(child);
            if (s != null) {
                ticks += s[0] + s[1];
            }
        }
        return ticks / clockTicksPerSecond;
    }

    /**
     * CPU seconds the host took from this virtual machine since boot (the {@code steal} column of
     * {@code /proc/stat}'s first line: time a vCPU wanted to run and the hypervisor ran something else);
     * NaN where the kernel does not say. A phase with steal ran on a slower machine than one without.
     */
    double stealSeconds() {
        try {
            return stealOf(Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.ISO_8859_1).get(0));
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The steal seconds of {@code /proc/stat}'s first line ("cpu user nice system idle iowait irq softirq steal ..."). */
    double stealOf(String firstLine) {
        String[] f = firstLine.trim().split("\\s+");
        try {
            return f.length > 8 && f[0].equals("cpu") ? Long.parseLong(f[8]) / clockTicksPerSecond : Double.NaN;
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** utime, stime, cutime, cstime, ppid of a process; null when it is gone. */
    private static long[] stat(long pid) {
        try {
            String text = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.ISO_8859_1);
            // the command name (field 2) is in parentheses and may hold spaces: split after the last ')'
            String[] f = text.substring(text.lastIndexOf(')') + 2).trim().split(" ");
            // f[0] is field 3 (state), f[1] field 4 (ppid); utime..cstime are fields 14..17
            return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]),
                Long.parseLong(f[14]), Long.parseLong(f[1])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static List<Long> descendants(long root) {
        List<long[]> all = new ArrayList<>(); // pid, ppid
        try (var dirs = Files.list(Path.of("/proc"))) {
            dirs.forEach(p -> {
                String name = p.getFileName().toString();
                if (!name.isEmpty() && name.chars().allMatch(Character::isDigit)) {
                    long pid = Long.parseLong(name);
                    long[] s = stat(pid);
                    if (s != null) {
                        all.add(new long[] {pid, s[4]});
                    }
                }
            });
        } catch (IOException e) {
            return List.of();
        }
        List<Long> result = new ArrayList<>();
        List<Long> frontier = new ArrayList<>(List.of(root));
        for (int depth = 0; depth < 16 && !frontier.isEmpty(); depth++) {
            List<Long> next = new ArrayList<>();
            for (long[] e : all) {
                if (frontier.contains(e[1])) {
                    next.add(e[0]);
                }
            }
            result.addAll(next);
            frontier = next;
        }
        return result;
    }

    /** A field of /proc/pid/status in MiB (VmRSS, VmHWM), NaN when unknown. */
    static double statusMiB(long pid, String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.ISO_8859_1)) {
                if (l.startsWith(field + ":")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone
        }
        return Double.NaN;
    }

    private static final Pattern HEAP = Pattern.compile("heap\\s+total\\s+(\\d+)K,\\s+used\\s+(\\d+)K");

    /** {committed MiB, used MiB} of a JVM's heap from {@code jcmd <pid> GC.heap_info}; NaNs when unknown. */
    static double[] heapMiB(long pid) {
        String out = jcmd(pid, "GC.heap_info");
        Matcher m = HEAP.matcher(out);
        if (m.find()) {
            return new double[] {Long.parseLong(m.group(1)) / 1024.0, Long.parseLong(m.group(2)) / 1024.0};
        }
        return new double[] {Double.NaN, Double.NaN};
    }

    /** Runs {@code jcmd pid command} (bounded to 60 s); its output, or "" on failure. */
    static String jcmd(long pid, String command) {
        String javaHome = System.getProperty("java.home");
        Path jcmd = Path.of(javaHome, "bin", "jcmd");
        String exe = Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd";
        try {
            Process p = new ProcessBuilder(exe, Long.toString(pid), command).redirectErrorStream(true).start();
            byte[] bytes = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
