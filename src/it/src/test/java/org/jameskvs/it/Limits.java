package org.jameskvs.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.jameskvs.testkit.ChildProcess;

/**
 * File-descriptor limits. Child processes are started through {@code bash -c 'ulimit -n N; exec java ...'}
 * (N = system property {@code it.openFiles}, default 65536; if the hard limit is lower and cannot be
 * raised, the hard limit), so James and the KVS nodes can hold thousands of sockets whatever the
 * shell's soft limit. The test JVM's own limit is what Maven's surefire fork inherited; tests that
 * need many sockets check it and say so.
 */
final class Limits {
    static final int WANTED = Integer.getInteger("it.openFiles", 65536);
    /**
     * Extra JVM flags of the James and KVS node processes (system property {@code it.childJvmFlags}):
     * by default C1 only and the serial collector, which start James about a third faster on a
     * 2-core CI machine and leave the cores to the load; throughput is not what this suite measures.
     */
    static final List<String> CHILD_JVM_FLAGS = List.of(
        System.getProperty("it.childJvmFlags", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC").trim().split("\\s+"))
        .stream().filter(f -> !f.isEmpty()).toList();

    private Limits() {
    }

    /** The words that run a command with the raised open-files limit ({@link ChildProcess#withOpenFiles}). */
    static List<String> openFilesPrefix() {
        return ChildProcess.withOpenFiles(WANTED, List.of());
    }

    /** Soft "Max open files" of a process (from /proc), or -1 if unknown. */
    static long openFiles(long pid) {
        return parse(Path.of("/proc/" + pid + "/limits"));
    }

    /** Soft "Max open files" of this JVM, or -1 if unknown. */
    static long ownOpenFiles() {
        return parse(Path.of("/proc/self/limits"));
    }

    private static long parse(Path limits) {
        try {
            for (String line : Files.readAllLines(limits)) {
                if (line.startsWith("Max open files")) {
                    String[] fields = line.substring("Max open files".length()).trim().split("\\s+");
                    return fields[0].equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(fields[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or the process is gone
        }
        return -1;
    }
}
