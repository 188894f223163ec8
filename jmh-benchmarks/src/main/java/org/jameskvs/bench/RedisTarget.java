package org.jameskvs.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import java.util.concurrent.CompletableFuture;

/**
 * Redis (its own process) as the baseline: store = RPUSH onto a list, delete = LPOP, pipelined on
 * one Lettuce connection with auto-flush off (commands are written in one go, like ours).
 */
final class RedisTarget implements StoreDeleteTarget {
    private static final byte[] KEY = "bench".getBytes();
    private final ServerProcesses.Running server;
    private final RedisClient client;
    private final StatefulRedisConnection<byte[], byte[]> connection;
    private final RedisAsyncCommands<byte[], byte[]> commands;

    RedisTarget(ServerProcesses.Running server) {
        this.server = server;
        this.client = RedisClient.create("redis://127.0.0.1:" + server.port());
        this.connection = client.connect(ByteArrayCodec.INSTANCE);
        this.commands = connection.async();
    }

    @Override
    public int storeDeleteBatch(byte[][] ids, byte[] body) throws Exception {
        connection.setAutoFlushCommands(false);
        @SuppressWarnings("unchecked")
        RedisFuture<?>[] futures = new RedisFuture[ids.length * 2];
        for (int i = 0; i < ids.length; i++) {
            futures[2 * i] = commands.rpush(KEY, body);
            futures[2 * i + 1] = commands.lpop(KEY);
        }
        connection.flushCommands();
        futures[futures.length - 1].get();
        int ok = 0;
        for (int i = 0; i < ids.length; i++) {
            if (futures[2 * i].get() != null && futures[2 * i + 1].get() != null) {
                ok++;
            }
        }
        return ok;
    }

    @Override
    public CompletableFuture<?> storeAsync(byte[] id, byte[] body) {
        return commands.rpush(KEY, body).toCompletableFuture();
    }

    @Override
    public CompletableFuture<?> deleteAsync(byte[] id) {
        return commands.lpop(KEY).toCompletableFuture();
    }

    @Override
    public void flush() {
        connection.flushCommands();
    }

    @Override
    public java.util.List<Process> serverProcesses() {
        return java.util.List.of(server.process());
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
        server.close();
    }
}
