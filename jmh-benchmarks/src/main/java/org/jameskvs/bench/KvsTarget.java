package org.jameskvs.bench;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;

import java.time.Duration;

/** The KVS server (its own process) through the client library, one pipelined connection. */
public final class KvsTarget extends KvsQueueTarget {
    private final ServerProcesses.Running server;
    private final KvsClient client;
    private final KvsQueue queue;

    KvsTarget(ServerProcesses.Running server) {
        this.server = server;
        this.client = KvsClient.connect(KvsClientConfig.builder().host("127.0.0.1").port(server.port())
                .credentials("james", ServerProcesses.PASSWORD).maxInFlight(8192).maxPending(65536)
                .requestTimeout(Duration.ofSeconds(30)).build());
        this.queue = client.open("bench", OpenOptions.writer("bench", 1)).join().orThrow();
    }

    @Override
    protected KvsQueue queue() {
        return queue;
    }

    @Override
    public java.util.List<Process> serverProcesses() {
        return java.util.List.of(server.process());
    }

    @Override
    public java.util.List<Integer> metricsPorts() {
        return java.util.List.of(server.metricsPort());
    }

    @Override
    public void close() {
        queue.close();
        client.close();
        server.close();
    }
}
