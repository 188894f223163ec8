package org.jameskvs.bench;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** The KVS server (its own process) through the client library, one pipelined connection. */
public final class KvsTarget implements StoreDeleteTarget {
    private static final byte[] NO_STATE = new byte[0];
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
    public int storeDeleteBatch(byte[][] ids, byte[] body) {
        return storeDeleteBatch(queue, ids, body);
    }

    /**
     * Pipelines one put and one delete per id on any {@link KvsQueue} (one server, or replicated) and
     * waits for all answers; returns how many transactions succeeded on both requests.
     */
    public static int storeDeleteBatch(KvsQueue queue, byte[][] ids, byte[] body) {
        @SuppressWarnings("unchecked")
        CompletableFuture<Ack>[] acks = new CompletableFuture[ids.length * 2];
        for (int i = 0; i < ids.length; i++) {
            acks[2 * i] = queue.put(ids[i], 5, 0, NO_STATE, body);
            acks[2 * i + 1] = queue.delete(ids[i]);
        }
        CompletableFuture.allOf(acks).join();
        int ok = 0;
        for (int i = 0; i < ids.length; i++) {
            if (acks[2 * i].join().isOk() && acks[2 * i + 1].join().isOk()) {
                ok++;
            }
        }
        return ok;
    }

    @Override
    public CompletableFuture<Failure> store(byte[] id, byte[] body) {
        return queue.put(id, 5, 0, NO_STATE, body).thenApply(Failure::of);
    }

    @Override
    public CompletableFuture<Failure> delete(byte[] id) {
        return queue.delete(id).thenApply(Failure::of);
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
