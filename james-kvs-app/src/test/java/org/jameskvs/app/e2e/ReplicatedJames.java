package org.jameskvs.app.e2e;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.jameskvs.testkit.KvsServerProcess;
import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.james.JamesProcess;
import org.jameskvs.testkit.smtp.SmtpSink;

/**
 * The two-copy end-to-end rig: two KVS server processes ({@code kvs-node1}, {@code kvs-node2} in a
 * new folder of {@code -De2e.workdir}, default target/e2e), the sink (James's next hop), and James
 * 3.8.1 with the plug-in whose replication block names both nodes, plus the test's own
 * {@code configure}. {@link #close()} stops them in the reverse order.
 */
final class ReplicatedJames implements AutoCloseable {
    final KvsServerProcess node1;
    final KvsServerProcess node2;
    final SmtpSink sink;
    final JamesProcess james;

    private ReplicatedJames(KvsServerProcess node1, KvsServerProcess node2, SmtpSink sink, JamesProcess james) {
        this.node1 = node1;
        this.node2 = node2;
        this.sink = sink;
        this.james = james;
    }

    /** Starts the rig in {@code <workdir>/<name>-<now>}; what started is stopped again if a later part fails. */
    static ReplicatedJames start(String name, Consumer<JamesConf> configure) throws Exception {
        return start(name, new String[0], configure);
    }

    /** As {@link #start(String, Consumer)}, both KVS nodes with these more {@code key=value} settings. */
    static ReplicatedJames start(String name, String[] nodeProperties, Consumer<JamesConf> configure) throws Exception {
        return start(name, nodeProperties, nodeProperties, configure);
    }

    /** As {@link #start(String, Consumer)}, each KVS node with its own more {@code key=value} settings. */
    static ReplicatedJames start(String name, String[] node1Properties, String[] node2Properties, Consumer<JamesConf> configure)
            throws Exception {
        return start(name, JamesProcess.lib() + "/*", node1Properties, node2Properties, configure);
    }

    /** As {@link #start(String, Consumer)}, James started with this class path. */
    static ReplicatedJames start(String name, String jamesClasspath, String[] node1Properties, String[] node2Properties,
                                 Consumer<JamesConf> configure) throws Exception {
        Path run = Path.of(System.getProperty("e2e.workdir", "target/e2e")).resolve(name + "-" + System.currentTimeMillis());
        List<AutoCloseable> started = new ArrayList<>();
        try {
            KvsServerProcess node1 = KvsServerProcess.start(run.resolve("kvs-node1"), node1Properties);
            started.add(node1);
            KvsServerProcess node2 = KvsServerProcess.start(run.resolve("kvs-node2"), node2Properties);
            started.add(node2);
            SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER);
            started.add(sink);
            JamesProcess james = JamesProcess.create(run.resolve("james"), jamesClasspath, "kvs", sink.port(), List.of(), conf -> {
                conf.kvsReplicated(node1.address(), node2.address(), KvsServerProcess.PASSWORD);
                configure.accept(conf);
            });
            started.add(james);
            james.startAgain();
            return new ReplicatedJames(node1, node2, sink, james);
        } catch (Exception | Error e) {
            closeAll(started, e);
            throw e;
        }
    }

    @Override
    public void close() throws Exception {
        closeAll(List.of(node1, node2, sink, james), null);
    }

    /** Closes {@code parts} newest first, every one even when some fail: failures go to {@code failure}, or the first is thrown. */
    private static void closeAll(List<? extends AutoCloseable> parts, Throwable failure) throws Exception {
        Exception first = null;
        for (int i = parts.size() - 1; i >= 0; i--) {
            try {
                parts.get(i).close();
            } catch (Exception e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
