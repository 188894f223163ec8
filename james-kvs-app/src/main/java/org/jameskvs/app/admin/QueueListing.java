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
import org.jameskvs.replication.ReplicationConfig;

/**
 * {@code kvs-admin list}: asks every KVS node of the group directly (one plain connection each, a
 * read-only STAT per queue: nothing is fenced) what it holds, and the group for each queue's lease.
 * A queue appears once per node holding it; a node holding an empty queue that is no copy (what a
 * takeover's fencing leaves) shows size 0 and no lease column of its own.
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
                rows.add(new String[] {"(unreachable)", node.name(), "", "", "", "", "", e.getMessage()});
            }
        }
        out.println("MSGS: messages on that node, a replicated copy's replication record (its lease) included;"
            + " BYTES: their bodies; EPOCH: the writer's fencing epoch on the node; TXN: the copy's transaction number");
        out.printf("%-40s %-8s %8s %12s %-24s %14s %10s%n", "QUEUE", "NODE", "MSGS", "BYTES", "OWNER", "EPOCH", "TXN");
        rows.sort((a, b) -> (a[0] + a[1]).compareTo(b[0] + b[1]));
        for (String[] row : rows) {
            out.printf("%-40s %-8s %8s %12s %-24s %14s %10s%s%n", row[0], row[1], row[2], row[3], row[4], row[5], row[6],
                row[7].isEmpty() ? "" : "  " + row[7]);
        }
        out.printf("%n%-40s %-32s %10s %8s  %s%n", "QUEUE", "LEASE OWNER", "EPOCH", "SEQ", "COPIES (nodes holding messages)");
        for (String name : names) {
            Optional<Lease> lease = Futures.await(opener.peekLease(name), configuration.requestTimeout(), "lease of " + name);
            List<String> copies = rows.stream().filter(r -> r[0].equals(name) && !r[2].equals("0")).map(r -> r[1]).toList();
            out.printf("%-40s %-32s %10s %8s  %s%n", name, lease.map(Lease::owner).orElse("-"),
                lease.map(l -> String.valueOf(l.epoch())).orElse("-"), lease.map(l -> String.valueOf(l.seq())).orElse("-"),
                copies);
        }
    }

    private String[] row(KvsClient client, String node, QueueInfo queue) {
        OpenResult open = Futures.await(client.open(queue.name(), OpenOptions.reader()), configuration.requestTimeout(),
            "open " + queue.name());
        if (!open.isOk()) {
            return new String[] {queue.name(), node, String.valueOf(queue.size()), "", "", "", String.valueOf(queue.txn()),
                "stat: " + open.status()};
        }
        try {
            QueueStat stat = Futures.await(open.queue().stat(), configuration.requestTimeout(), "stat " + queue.name());
            return new String[] {queue.name(), node, String.valueOf(stat.size()), String.valueOf(stat.bytes()),
                stat.owner() == null || stat.owner().isEmpty() ? "-" : stat.owner(), String.valueOf(stat.epoch()),
                String.valueOf(stat.txn()), ""};
        } finally {
            open.queue().close();
        }
    }
}
