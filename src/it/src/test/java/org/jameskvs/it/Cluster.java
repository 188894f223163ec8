package org.jameskvs.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.zip.CRC32;

import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.smtp.SmtpSink;

/**
 * The whole path on loopback: three KVS node processes (kvs1..kvs3), the SMTP sink (RemoteDelivery's
 * gateway, in this JVM) and James with the plug-in, every queue and the kvs:// error repository on two
 * of the three nodes. Closed in reverse order (James, nodes, sink), each bounded.
 */
final class Cluster implements AutoCloseable {
    final Path directory;
    final List<KvsNode> nodes;
    final SmtpSink sink;
    final JamesNode james;

    private Cluster(Path directory, List<KvsNode> nodes, SmtpSink sink, JamesNode james) {
        this.directory = directory;
        this.nodes = nodes;
        this.sink = sink;
        this.james = james;
    }

    static Cluster start(String name) throws Exception {
        return start(name, conf -> { });
    }

    static Cluster start(String name, Consumer<JamesConf> configure) throws Exception {
        Path directory = Scenario.runDirectory(name);
        List<KvsNode> nodes = new ArrayList<>();
        SmtpSink sink = null;
        try {
            for (int n = 1; n <= 3; n++) {
                nodes.add(KvsNode.start("kvs" + n, directory.resolve("kvs" + n)));
            }
            sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
            JamesNode james = JamesNode.start(directory.resolve("james"), sink.port(), nodes, configure);
            return new Cluster(directory, nodes, sink, james);
        } catch (Exception | Error e) {
            for (KvsNode node : nodes) {
                node.close();
            }
            if (sink != null) {
                sink.close();
            }
            throw e;
        }
    }

    KvsNode node(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
    }

    /**
     * The two nodes holding a KVS queue under the default SPREAD placement (kvs-replication's Placement:
     * CRC32(queue name) mod 3 picks the first, the next node of the group the second).
     */
    List<String> pairOf(String kvsQueue) {
        CRC32 crc = new CRC32();
        crc.update(kvsQueue.getBytes(StandardCharsets.UTF_8));
        int first = (int) (crc.getValue() % nodes.size());
        return List.of(nodes.get(first).name(), nodes.get((first + 1) % nodes.size()).name());
    }

    /** A node holding a copy of both the spool and the outgoing queue (normal priority): there always is one with 3 nodes. */
    String nodeHoldingSpoolAndOutgoing() {
        List<String> spool = pairOf("james/queue/spool@p5");
        List<String> outgoing = pairOf("james/queue/outgoing@p5");
        return spool.stream().filter(outgoing::contains).findFirst().orElse(spool.get(0));
    }

    String diagnostics() {
        StringBuilder text = new StringBuilder();
        text.append("sink: ").append(sink.statsLine()).append('\n');
        if (james.isAlive()) {
            text.append(james.queuesSummary()).append('\n').append(james.logTail(60)).append('\n');
        }
        for (KvsNode node : nodes) {
            text.append(node.logTail(10)).append('\n');
        }
        return text.toString();
    }

    @Override
    public void close() throws Exception {
        try {
            james.close();
        } finally {
            closeNodesThenSink(nodes, sink);
        }
    }

    /** Closes the KVS nodes in order, then the sink, the sink even when a node's close failed (that failure is thrown). */
    static void closeNodesThenSink(List<KvsNode> nodes, SmtpSink sink) throws Exception {
        try {
            for (KvsNode node : nodes) {
                node.close();
            }
        } finally {
            sink.close();
        }
    }
}
