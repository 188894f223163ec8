package org.jameskvs.app.admin;

import java.io.PrintStream;
import java.util.Map;

import org.jameskvs.james.Futures;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.replication.ManagementTable;
import org.jameskvs.replication.NetState;

/**
 * {@code kvs-admin table QUEUE}: the paper's management table (Table I) of one queue, read from the
 * KVS nodes with read handles (fences nothing): per node holding the queue, the network state of
 * its active (A) and standby (S) path as this command's heartbeats see them, its sync state in the
 * newest replication record, its transaction number and epoch counter, and a note (the record's
 * version and owner, "not a copy", "record behind", "copy did not answer").
 */
final class QueueTable {
    private final KvsSpoolConfiguration configuration;
    private final ReplicatedKvsOpener opener;

    QueueTable(KvsSpoolConfiguration configuration, ReplicatedKvsOpener opener) {
        this.configuration = configuration;
        this.opener = opener;
    }

    /** @return false when no node holds the queue */
    boolean print(String queue, PrintStream out) {
        // Twice the request timeout: the peek itself ends after one request timeout with what answered.
        ManagementTable table = Futures.await(opener.peekTable(queue), configuration.requestTimeout().multipliedBy(2),
            "table of " + queue);
        out.print(table.format());
        out.println();
        out.printf("%-10s %-6s %-6s%n", "KVS", "NET(A)", "NET(S)");
        for (Map.Entry<String, NetState[]> node : table.nodes().entrySet()) {
            out.printf("%-10s %-6s %-6s%n", node.getKey(), node.getValue()[0], node.getValue()[1]);
        }
        return !table.rows().isEmpty();
    }
}
