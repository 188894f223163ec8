package org.jameskvs.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import java.util.concurrent.CompletableFuture;

/**
 * Redis (its own process) as the baseline: store = RPUSH onto a list, delete = LPOP, pipelined on
 * one Lettuce connection with auto-flush off (commands are written in one go, like ours). An RPUSH
 * succeeded when Redis replied with the list's length; an error reply is a failure.
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
        // Commands are written by flushCommands() (per batch, per pass of a rate driver), like ours.
        connection.setAutoFlushCommands(false);
    }

    @Override
    public int storeDeleteBatch(byte[][] ids, byte[] body) throws Exception {
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
    public CompletableFuture<Failure> store(byte[] id, byte[] body) {
        return commands.rpush(KEY, body).toCompletableFuture()
                .handle((length, e) -> e != null ? Failure.of(e) : null);
    }

    @Override
    public CompletableFuture<Failure> delete(byte[] id) {
        return commands.lpop(KEY).toCompletableFuture()
                .handle((popped, e) -> e != null ? Failure.of(e)
                        : popped == null ? new Failure("EMPTY", "LPOP found the list empty") : null);
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
