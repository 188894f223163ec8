package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/kvs-admin} run as a process with a James node's conf directory (it asks the KVS nodes
 * directly, read-only), and the lease section of its {@code list} output: per queue the owner and
 * fencing epoch of the newest replication record and the copies that record names.
 */
final class KvsAdminCli {
    /**
     * One queue's lease as {@code kvs-admin list} shows it.
     *
     * @param epoch  the writer's fencing epoch: {@code (counter << 20) | process id} (kvs-replication's Epochs)
     * @param copies the copies the record names, as {@code node:STATE} (e.g. {@code kvs2:SYNC})
     */
    record Lease(String owner, long epoch, long seq, List<String> copies) {
        /** The epoch counter: one more at each reclaim or takeover. */
        long epochCounter() {
            return epoch >>> 20;
        }
    }

    private KvsAdminCli() {
    }

    /** Runs bin/kvs-admin (bounded: 120 s); asserts exit status 0; returns stdout and stderr. */
    static String run(Path conf, String... args) throws Exception {
        return run(0, conf, args);
    }

    /** Runs bin/kvs-admin (bounded: 120 s); asserts its exit status; returns stdout and stderr. */
    static String run(int expectedStatus, Path conf, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of("../../bin/kvs-admin").toAbsolutePath().normalize().toString(),
            conf.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s", command).isTrue();
        assertThat(process.exitValue()).as("%s\n%s", command, output).isEqualTo(expectedStatus);
        return output;
    }

    /** {@code kvs-admin list prefix}'s lease section: queue name -> lease (queues without a record left out). */
    static Map<String, Lease> leases(Path conf, String prefix) throws Exception {
        String listing = run(conf, "list", prefix);
        Map<String, Lease> leases = new TreeMap<>();
        // The lease section follows the first blank line: QUEUE LEASE-OWNER EPOCH REC.SEQ COPIES...
        for (String line : listing.lines().dropWhile(l -> !l.isBlank()).toList()) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length >= 5 && columns[0].startsWith(prefix) && columns[2].matches("\\d+") && columns[3].matches("\\d+")) {
                List<String> copies = List.of(columns).subList(4, columns.length);
                leases.put(columns[0], new Lease(columns[1], Long.parseLong(columns[2]), Long.parseLong(columns[3]),
                    copies.equals(List.of("-")) ? List.of() : copies));
            }
        }
        return leases;
    }
}
