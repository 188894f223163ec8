package org.jameskvs.bench.replication;

import org.jameskvs.bench.KvsQueueTarget;
import org.jameskvs.bench.ServerProcesses;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Two copies: a {@link org.jameskvs.replication.ReplicatedQueue} over {@code n} KVS server
 * processes (fsync none, or the policy given); every store and delete is acknowledged only when both copies applied it.
 * The opener keeps two connections per node (active and standby path); traffic flows on the
 * active one, so the data path is one pipelined connection per node.
 */
public final class ReplicatedTarget extends KvsQueueTarget {
    private final List<ServerProcesses.Running> servers;
    private final ReplicatedQueueOpener opener;
    private final KvsQueue queue;

    public ReplicatedTarget(int nodes) throws Exception {
        this(nodes, "none");
    }

    /** @param fsync the nodes' {@code fsync.policy} (none, interval, batch) */
    public ReplicatedTarget(int nodes, String fsync) throws Exception {
        this(nodes, fsync, Duration.ofMillis(500), Duration.ofMillis(1500), Duration.ofMillis(2000));
    }

    public ReplicatedTarget(int nodes, Duration heartbeat, Duration heartbeatTimeout, Duration requestTimeout)
            throws Exception {
        this(nodes, "none", heartbeat, heartbeatTimeout, requestTimeout);
    }

    public ReplicatedTarget(int nodes, String fsync, Duration heartbeat, Duration heartbeatTimeout,
                            Duration requestTimeout) throws Exception {
        servers = new ArrayList<>();
        List<ReplicationConfig.NodeSpec> specs = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            ServerProcesses.Running s = ServerProcesses.kvs(fsync);
            servers.add(s);
            specs.add(new ReplicationConfig.NodeSpec("kvs" + i, "127.0.0.1", s.port(), "127.0.0.1", s.port()));
        }
        ReplicationConfig config = ReplicationConfig.of(specs, "james", ServerProcesses.PASSWORD)
                .withTimings(heartbeat, heartbeatTimeout, requestTimeout);
        opener = ReplicatedQueueOpener.start(config);
        opener.awaitConnected(nodes, Duration.ofSeconds(30));
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
            r = opener.open("bench", OpenOptions.writer("bench", 1)).join();
            if (r.isOk()) {
                break;
            }
            Thread.sleep(100);
        }
        if (r == null || !r.isOk()) {
            close();
            throw new IllegalStateException("cannot open the replicated queue: " + (r == null ? "-" : r.status() + " " + r.reason()));
        }
        queue = r.queue();
    }

    public ReplicatedQueueOpener opener() {
        return opener;
    }

    @Override
    public KvsQueue queue() {
        return queue;
    }

    public List<ServerProcesses.Running> servers() {
        return servers;
    }

    @Override
    public List<Process> serverProcesses() {
        return servers.stream().map(ServerProcesses.Running::process).toList();
    }

    @Override
    public List<Integer> metricsPorts() {
        return servers.stream().map(ServerProcesses.Running::metricsPort).toList();
    }

    @Override
    public void close() {
        if (opener != null) {
            opener.close();
        }
        servers.forEach(ServerProcesses.Running::close);
    }
}
