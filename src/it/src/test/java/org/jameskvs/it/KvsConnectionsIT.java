package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.junit.jupiter.api.Test;

/**
 * The M-Box criterion on the KVS side: {@code it.kvsConnections} (1,000) raw client connections to one
 * KVS node process, all open at the same time (the node's own {@code kvs_connections} gauge shows
 * them), each authenticating, opening its own queue and doing {@value #MESSAGES} PUTs and GETs,
 * all in flight together. Zero errors allowed: every call answered OK, every GET returns the bytes put.
 */
class KvsConnectionsIT {
    private static final int CONNECTIONS = Integer.getInteger("it.kvsConnections", 1000);
    private static final int MESSAGES = 5;

    @Test
    void thousandConcurrentConnectionsWithoutErrors() throws Exception {
        long ownLimit = Limits.ownOpenFiles();
        assertThat(ownLimit).as("open-files limit of the test JVM (raise ulimit -n of the shell running mvn)")
            .isGreaterThan(CONNECTIONS + 500L);
        EventLoopGroup group = new NioEventLoopGroup(4);
        ExecutorService connectors = Executors.newFixedThreadPool(32);
        Map<String, String> errors = new ConcurrentHashMap<>();
        List<KvsClient> clients = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong operations = new AtomicLong();
        try (KvsNode node = KvsNode.start("kvs-conc", Scenario.runDirectory("kvs-connections").resolve("kvs1"))) {
          try {
            long nodeLimit = Limits.openFiles(node.pid());
            long start = System.nanoTime();
            List<Future<?>> connecting = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                int n = i;
                connecting.add(connectors.submit(() -> {
                    try {
                        clients.add(KvsClient.connect(KvsClientConfig.builder()
                            .host("127.0.0.1").port(node.port())
                            .credentials("james", KvsNode.PASSWORD)
                            .eventLoopGroup(group)
                            .connectTimeout(Duration.ofSeconds(30))
                            .requestTimeout(Duration.ofSeconds(60))
                            .build()));
                    } catch (RuntimeException e) {
                        errors.put("connect-" + n, e.toString());
                    }
                }));
            }
            for (Future<?> f : connecting) {
                f.get(180, TimeUnit.SECONDS);
            }
            long connectMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            double serverSeen = awaitServerConnections(node, clients.size());

            // Every connection's work in flight at once: OPEN -> 5 pipelined PUTs -> 5 pipelined GETs.
            List<CompletableFuture<Void>> work = new ArrayList<>();
            for (int i = 0; i < clients.size(); i++) {
                work.add(exercise(clients.get(i), "it/connections/" + i, errors, operations));
            }
            CompletableFuture.allOf(work.toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            Scenario.report("concurrency=kvs connections=" + CONNECTIONS + " connected=" + clients.size()
                + " serverConnectionsGauge=" + (long) serverSeen + " operations=" + operations.get()
                + " errors=" + errors.size() + " connect_ms=" + connectMillis + " elapsed_ms=" + elapsedMillis
                + " openFiles(testJVM)=" + ownLimit + " openFiles(kvs)=" + nodeLimit);
            assertThat(errors).as("errors (%d)", errors.size()).isEmpty();
            assertThat(clients).hasSize(CONNECTIONS);
            assertThat((long) serverSeen).as("kvs_connections on the node while all clients were connected")
                .isGreaterThanOrEqualTo(CONNECTIONS);
            assertThat(operations.get()).isEqualTo((long) CONNECTIONS * (1 + 2 * MESSAGES));
            assertThat(node.isRunning()).isTrue();
          } finally {
            // the clients first, while the node still runs (else they would log reconnect attempts)
            List<Future<?>> closing = new ArrayList<>();
            for (KvsClient client : List.copyOf(clients)) {
                closing.add(connectors.submit(client::close));
            }
            for (Future<?> f : closing) {
                f.get(60, TimeUnit.SECONDS);
            }
          }
        } finally {
            connectors.shutdownNow();
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    private static CompletableFuture<Void> exercise(KvsClient client, String queueName, Map<String, String> errors, AtomicLong operations) {
        return client.open(queueName, OpenOptions.writer("it-connections", 1)).thenCompose(opened -> {
            operations.incrementAndGet();
            if (!opened.isOk()) {
                errors.put(queueName + " open", opened.status() + " " + opened.reason());
                return CompletableFuture.completedFuture(null);
            }
            KvsQueue queue = opened.queue();
            List<CompletableFuture<Ack>> puts = new ArrayList<>();
            for (int m = 0; m < MESSAGES; m++) {
                puts.add(queue.put(id(m), 5, 0, new byte[0], body(queueName, m)));
            }
            return CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).thenCompose(v -> {
                for (int m = 0; m < MESSAGES; m++) {
                    Ack ack = puts.get(m).join(); // already complete
                    operations.incrementAndGet();
                    if (!ack.isOk()) {
                        errors.put(queueName + " put " + m, ack.status() + " " + ack.reason());
                    }
                }
                List<CompletableFuture<GetResult>> gets = new ArrayList<>();
                for (int m = 0; m < MESSAGES; m++) {
                    gets.add(queue.get(id(m)));
                }
                return CompletableFuture.allOf(gets.toArray(CompletableFuture[]::new)).thenAccept(w -> {
                    for (int m = 0; m < MESSAGES; m++) {
                        GetResult got = gets.get(m).join();
                        operations.incrementAndGet();
                        if (!got.isOk()) {
                            errors.put(queueName + " get " + m, got.status() + " " + got.reason());
                        } else if (!Arrays.equals(got.message().body(), body(queueName, m))) {
                            errors.put(queueName + " get " + m, "body differs");
                        }
                    }
                });
            });
        }).exceptionally(e -> {
            errors.put(queueName, e.toString());
            return null;
        });
    }

    private static double awaitServerConnections(KvsNode node, int expected) throws Exception {
        Instant deadline = Instant.now().plusSeconds(30);
        double seen = -1;
        while (Instant.now().isBefore(deadline)) {
            seen = node.metric("kvs_connections");
            if (seen >= expected) {
                return seen;
            }
            Thread.sleep(200);
        }
        return seen;
    }

    private static byte[] id(int m) {
        return ("m-" + m).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] body(String queue, int m) {
        return (queue + " message " + m + " " + "x".repeat(200)).getBytes(StandardCharsets.US_ASCII);
    }
}
