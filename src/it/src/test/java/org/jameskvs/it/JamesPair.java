package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.smtp.SmtpSink;

/**
 * Two James nodes on one KVS cluster, as the paper's L4 switch spreads them: three KVS node processes,
 * the SMTP sink (both nodes' RemoteDelivery gateway) and James {@code james-a} and {@code james-b}
 * (nodeId = ownerName = namespace), each with its own working directory and ports, both with short
 * leases ({@link #LEASE_RENEW_MILLIS} / {@link #LEASE_TIMEOUT_MILLIS}) so that adoption happens within
 * seconds of a loss. Closed in reverse order, each bounded.
 */
final class JamesPair implements AutoCloseable {
    static final int LEASE_RENEW_MILLIS = Integer.getInteger("it.leaseRenewMillis", 1_000);
    static final int LEASE_TIMEOUT_MILLIS = Integer.getInteger("it.leaseTimeoutMillis", 5_000);
    /**
     * A ceiling on the mails one James 3.8.1 node can have started delivering when it is lost or paused:
     * the duplicates such a loss may leave. Its RemoteDelivery runs deliveries on Reactor's bounded
     * elastic pool, 10 threads per core (the {@code deliveryThreads} setting is not what bounds it in
     * 3.8.1), and was seen with a few more started than threads (24 on 2 cores): twice the pool is the
     * ceiling asserted; the scenario lines give the measured count. The child JVMs run on this machine,
     * so they see the same number of cores.
     */
    static final int IN_FLIGHT_DELIVERIES = 2 * 10 * Runtime.getRuntime().availableProcessors();

    final Path directory;
    final List<KvsNode> nodes;
    final SmtpSink sink;
    final JamesNode a;
    final JamesNode b;

    private JamesPair(Path directory, List<KvsNode> nodes, SmtpSink sink, JamesNode a, JamesNode b) {
        this.directory = directory;
        this.nodes = nodes;
        this.sink = sink;
        this.a = a;
        this.b = b;
    }

    static JamesPair start(String name) throws Exception {
        Path directory = Scenario.runDirectory(name);
        List<KvsNode> nodes = new ArrayList<>();
        SmtpSink sink = null;
        JamesNode a = null;
        try {
            for (int n = 1; n <= 3; n++) {
                nodes.add(KvsNode.start("kvs" + n, directory.resolve("kvs" + n)));
            }
            sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
            a = JamesNode.start(directory.resolve("james-a"), sink.port(), nodes, conf -> clusterNode(conf, "james-a"));
            JamesNode b = JamesNode.start(directory.resolve("james-b"), sink.port(), nodes, conf -> clusterNode(conf, "james-b"));
            return new JamesPair(directory, nodes, sink, a, b);
        } catch (Exception | Error e) {
            if (a != null) {
                a.close();
            }
            for (KvsNode node : nodes) {
                node.close();
            }
            if (sink != null) {
                sink.close();
            }
            throw e;
        }
    }

    /** The node's id (its owner and namespace) and the short leases. */
    private static void clusterNode(JamesConf conf, String nodeId) {
        conf.replace("kvs-spool.properties", "\nnodeId=james\n", "\nnodeId=" + nodeId + "\n")
            .replace("kvs-spool.properties", "\n#replication.leaseRenewMillis=2000\n#replication.leaseTimeoutMillis=10000\n",
                "\nreplication.leaseRenewMillis=" + LEASE_RENEW_MILLIS + "\nreplication.leaseTimeoutMillis="
                    + LEASE_TIMEOUT_MILLIS + "\n");
    }

    /**
     * Waits (bounded) until {@code james}'s log contains {@code text}.
     *
     * @return {@link System#nanoTime()} when it was first seen, or -1 at the deadline
     */
    static long awaitLog(JamesNode james, String text, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (james.isAlive() && james.logText().contains(text)) {
                return System.nanoTime();
            }
            Thread.sleep(50);
        }
        return -1;
    }

    /**
     * With the sink holding every session (so the mail stays queued on james-a), sends {@code mails}
     * mails to james-a over {@code sessions} SMTP sessions and asserts each one was answered 250.
     * @return their ids, a list the caller may extend
     */
    List<String> queueOnAWhileTheSinkHolds(String idPrefix, int sessions, int mails, Duration sending) throws Exception {
        sink.holdAll(true);
        TrackingLoad load = new TrackingLoad(idPrefix, a.smtpPort(), sessions, mails, 0, 60_000).start();
        load.awaitDone(sending);
        List<String> accepted = new ArrayList<>(load.ids(TrackingLoad.Outcome.ACCEPTED));
        assertThat(accepted).as(load.summary()).hasSize(mails);
        return accepted;
    }

    /**
     * Delivery rate of {@code ids} at the sink, mails per second: how many there are over the time from
     * the first one's first receipt to the last one's (0 when fewer than two were received).
     */
    double drainRate(List<String> ids) {
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        int received = 0;
        for (String id : ids) {
            Long at = sink.firstReceivedNanos(id);
            if (at != null) {
                first = Math.min(first, at);
                last = Math.max(last, at);
                received++;
            }
        }
        return received < 2 || last == first ? 0 : received / ((last - first) / 1e9);
    }

    String diagnostics() {
        StringBuilder text = new StringBuilder();
        text.append("sink: ").append(sink.statsLine()).append('\n');
        for (JamesNode james : List.of(a, b)) {
            if (james.isAlive()) {
                text.append(james.queuesSummary()).append('\n').append(james.logTail(40)).append('\n');
            }
        }
        return text.toString();
    }

    @Override
    public void close() throws Exception {
        try {
            b.close();
            a.close();
        } finally {
            Cluster.closeNodesThenSink(nodes, sink);
        }
    }
}
