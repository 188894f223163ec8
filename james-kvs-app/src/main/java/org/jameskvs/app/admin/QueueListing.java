package org.jameskvs.app.admin;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueInfo;
import org.jameskvs.client.QueueStat;
import org.jameskvs.james.Futures;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.replication.Lease;
import org.jameskvs.replication.ManagementTable;
import org.jameskvs.replication.ReplicationConfig;

/**
 * {@code kvs-admin list}: asks every KVS node of the group directly (one plain connection each, a
 * read-only STAT per queue: nothing is fenced) what it holds, and the group for each queue's lease.
 * A queue appears once per node holding it (mail count, bytes, owner, epoch, transaction number, last
 * sequence number and digest); then once with its lease and its copies with their sync state. A node
 * holding an empty queue that is no copy (what a takeover's fencing leaves) shows 0 and is no copy.
 */
final class QueueListing {
    private final KvsSpoolConfiguration configuration;
    private final ReplicatedKvsOpener opener;

    QueueListing(KvsSpoolConfiguration configuration, ReplicatedKvsOpener opener) {
        this.configuration = configuration;
        this.opener = opener;
    }

    void print(String prefix, PrintStream out) {
        ReplicationConfig group = ReplicationConfig.fromProperties(configuration.properties());
        List<String[]> rows = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>();
        for (ReplicationConfig.NodeSpec node : group.nodes()) {
            try (KvsClient client = KvsClient.connect(KvsClientConfig.builder()
                .host(node.activeHost()).port(node.activePort())
                .credentials(group.user(), group.password())
                .tls(configuration.tls())
                .requestTimeout(configuration.requestTimeout())
                .build())) {
                List<QueueInfo> queues = Futures.await(client.listQueues(), configuration.requestTimeout(), "list on " + node.name())
                    .orThrow();
                for (QueueInfo queue : queues) {
                    if (!queue.name().startsWith(prefix)) {
                        continue;
                    }
                    names.add(queue.name());
                    rows.add(row(client, node.name(), queue));
                }
            } catch (RuntimeException e) {
                rows.add(new String[] {"(unreachable)", node.name(), "", "", "", "", "", "", "", e.getMessage()});
            }
        }
        out.println("MSGS: mail on that node (the replication's own record not counted); BYTES: their bodies"
            + " (the record has none); EPOCH: the writer's fencing epoch on the node; TXN: the copy's transaction number;"
            + " SEQ, DIGEST: the copy's last sequence number and content digest (equal on copies in sync)");
        out.printf("%-40s %-8s %8s %12s %-24s %20s %10s %10s %-16s%n", "QUEUE", "NODE", "MSGS", "BYTES", "OWNER", "EPOCH", "TXN",
            "SEQ", "DIGEST");
        rows.sort((a, b) -> (a[0] + a[1]).compareTo(b[0] + b[1]));
        for (String[] row : rows) {
            out.printf("%-40s %-8s %8s %12s %-24s %20s %10s %10s %-16s%s%n", row[0], row[1], row[2], row[3], row[4], row[5], row[6],
                row[7], row[8], row[9].isEmpty() ? "" : "  " + row[9]);
        }
        out.printf("%n%-40s %-32s %20s %8s  %s%n", "QUEUE", "LEASE OWNER", "EPOCH", "REC.SEQ",
            "COPIES (node:sync state in the newest replication record)");
        for (String name : names) {
            Optional<Lease> lease = Futures.await(opener.peekLease(name), configuration.requestTimeout(), "lease of " + name);
            out.printf("%-40s %-32s %20s %8s  %s%n", name, lease.map(Lease::owner).orElse("-"),
                lease.map(l -> String.valueOf(l.epoch())).orElse("-"), lease.map(l -> String.valueOf(l.seq())).orElse("-"),
                copies(name));
        }
    }

    /** The copies the newest replication record names, as {@code node:SYNC} (see {@code kvs-admin table}). */
    private String copies(String name) {
        // Twice the request timeout: the peek itself ends after one request timeout with what answered.
        ManagementTable table = Futures.await(opener.peekTable(name), configuration.requestTimeout().multipliedBy(2),
            "table of " + name);
        List<String> copies = table.rows().stream().filter(ManagementTable.Row::copy).map(r -> r.node() + ":" + r.sync()).toList();
        return copies.isEmpty() ? "-" : String.join(" ", copies);
    }

    private String[] row(KvsClient client, String node, QueueInfo queue) {
        OpenResult open = Futures.await(client.open(queue.name(), OpenOptions.reader()), configuration.requestTimeout(),
            "open " + queue.name());
        if (!open.isOk()) {
            return new String[] {queue.name(), node, String.valueOf(queue.size()), "", "", "", String.valueOf(queue.txn()), "", "",
                "stat: " + open.status()};
        }
        try {
            QueueStat stat = Futures.await(open.queue().stat(), configuration.requestTimeout(), "stat " + queue.name());
            // MSGS from LIST, which counts mail only (the server leaves out reserved ids); STAT's size is raw.
            return new String[] {queue.name(), node, String.valueOf(queue.size()), String.valueOf(stat.bytes()),
                stat.owner() == null || stat.owner().isEmpty() ? "-" : stat.owner(), String.valueOf(stat.epoch()),
                String.valueOf(stat.txn()), stat.lastSeq() < 0 ? "-" : String.valueOf(stat.lastSeq()),
                Long.toHexString(stat.digest()), ""};
        } finally {
            open.queue().close();
        }
    }
}
