package org.jameskvs.faults;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.ReplicatedQueueOpener;
import org.jameskvs.replication.ReplicationConfig;

import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

/**
 * The owner (writer) as its own JVM, so that a test can kill -9 it. Opens one replicated queue
 * and runs {@link LoadLoop}; every outcome is written to stdout as one line, flushed at once
 * (the parent reads the pipe, so lines written before a SIGKILL are not lost):
 * <pre>
 * OPEN epoch          the queue is open
 * A id                put acknowledged (two copies)
 * F id STATUS         put failed (outcome may be unknown)
 * X id                delete sent
 * D id                delete acknowledged
 * DONE issued         load finished
 * </pre>
 * Usage: {@code WriterMain replication.properties queue owner epoch prefix maxCount millis deleteEvery}
 */
public final class WriterMain {
    private WriterMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (var in = Files.newInputStream(Path.of(args[0]))) {
            p.load(in);
        }
        String queue = args[1];
        String owner = args[2];
        long epoch = Long.parseLong(args[3]);
        String prefix = args[4];
        int maxCount = Integer.parseInt(args[5]);
        long millis = Long.parseLong(args[6]);
        int deleteEvery = Integer.parseInt(args[7]);
        PrintStream out = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);
        ReplicationConfig config = ReplicationConfig.fromProperties(p);
        ReplicatedQueueOpener opener = ReplicatedQueueOpener.start(config);
        opener.awaitConnected(config.nodes().size(), Duration.ofSeconds(20));
        OpenResult r = null;
        for (int i = 0; i < 100; i++) {
            r = opener.open(queue, OpenOptions.writer(owner, epoch)).join();
            if (r.isOk()) {
                break;
            }
            Thread.sleep(100);
        }
        if (r == null || !r.isOk()) {
            line(out, "OPENFAILED " + (r == null ? "-" : r.status() + " " + r.reason()));
            System.exit(2);
        }
        KvsQueue q = r.queue();
        line(out, "OPEN " + epoch);
        int issued = LoadLoop.run(q, prefix, maxCount, millis, deleteEvery, 32, new LoadLoop.Listener() {
            @Override
            public void onPutIssued(String id) {
            }

            @Override
            public void onPutAck(String id, long issuedNanos) {
                line(out, "A " + id);
            }

            @Override
            public void onPutFailed(String id, Status status) {
                line(out, "F " + id + " " + status);
            }

            @Override
            public void onDeleteIssued(String id) {
                line(out, "X " + id);
            }

            @Override
            public void onDeleteAck(String id) {
                line(out, "D " + id);
            }
        }, () -> false);
        line(out, "DONE " + issued);
        opener.close();
        System.exit(0);
    }

    private static void line(PrintStream out, String s) {
        synchronized (out) {
            out.println(s);
            out.flush();
        }
    }

    /** Writes a replication config as the properties {@link ReplicationConfig#fromProperties} reads. */
    public static void writeProperties(ReplicationConfig c, Path file) throws java.io.IOException {
        StringBuilder sb = new StringBuilder();
        sb.append("replication.nodes=").append(String.join(",", c.nodeNames())).append('\n');
        for (ReplicationConfig.NodeSpec n : c.nodes()) {
            sb.append("replication.node.").append(n.name()).append(".active=").append(n.activeHost()).append(':')
                    .append(n.activePort()).append('\n');
            sb.append("replication.node.").append(n.name()).append(".standby=").append(n.standbyHost()).append(':')
                    .append(n.standbyPort()).append('\n');
        }
        sb.append("replication.user=").append(c.user()).append('\n');
        sb.append("replication.password=").append(c.password()).append('\n');
        sb.append("replication.placement.rule=").append(c.placementRule()).append('\n');
        c.placementOverrides().forEach((q, pair) -> sb.append("replication.placement.").append(q).append('=')
                .append(String.join(",", pair)).append('\n'));
        sb.append("replication.heartbeatIntervalMillis=").append(c.heartbeatInterval().toMillis()).append('\n');
        sb.append("replication.heartbeatTimeoutMillis=").append(c.heartbeatTimeout().toMillis()).append('\n');
        sb.append("replication.requestTimeoutMillis=").append(c.requestTimeout().toMillis()).append('\n');
        sb.append("replication.copyBlockMessages=").append(c.copyBlockMessages()).append('\n');
        sb.append("replication.copyBlockBytes=").append(c.copyBlockBytes()).append('\n');
        sb.append("replication.leaseRenewMillis=").append(c.leaseRenew().toMillis()).append('\n');
        sb.append("replication.leaseTimeoutMillis=").append(c.leaseTimeout().toMillis()).append('\n');
        sb.append("replication.tickMillis=").append(c.tick().toMillis()).append('\n');
        sb.append("replication.maxCallsInside=").append(c.maxCallsInside()).append('\n');
        try (OutputStream o = Files.newOutputStream(file)) {
            o.write(sb.toString().getBytes(StandardCharsets.UTF_8));
        }
    }
}
