package org.jameskvs.client;

import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.client.TestSupport.await;
import static org.jameskvs.client.TestSupport.bytes;
import static org.jameskvs.client.TestSupport.eventually;

class PipeliningTest {

    @Test
    void tenThousandPipelinedPutsAreAnsweredInOrder() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            int n = 10_000;
            List<CompletableFuture<Ack>> futures = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                futures.add(q.put(bytes("id-" + i), 5, 0, null, bytes("body " + i)));
            }
            for (int i = 0; i < n; i++) {
                Ack ack = await(futures.get(i));
                assertThat(ack.status()).isEqualTo(Status.OK);
                assertThat(ack.value()).as("position of put %d", i).isEqualTo(i + 1);
                assertThat(ack.txn()).isEqualTo(i + 1);
            }
            long previous = 0;
            for (FakeKvsServer.Received r : server.log) {
                assertThat(r.sequence()).isGreaterThan(previous);
                previous = r.sequence();
            }
            assertThat(server.count(Opcode.PUT)).isEqualTo(n);
            // Many requests arrived in one socket read: they were not flushed one by one.
            assertThat(server.maxFramesPerRead.get()).isGreaterThan(10);
        }
    }

    @Test
    void callsFromManyThreadsAllComplete() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            List<Thread> threads = new ArrayList<>();
            List<CompletableFuture<Ack>> futures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int n = 0; n < 8; n++) {
                int thread = n;
                Thread t = new Thread(() -> {
                    for (int i = 0; i < 1000; i++) {
                        futures.add(q.put(bytes(thread + "-" + i), 0, 0, null, bytes("x")));
                    }
                });
                t.start();
                threads.add(t);
            }
            for (Thread t : threads) {
                t.join();
            }
            for (CompletableFuture<Ack> f : futures) {
                assertThat(await(f).isOk()).isTrue();
            }
            eventually(Duration.ofSeconds(2), () -> await(q.stat()).size() == 8000);
        }
    }

    /**
     * With the server silent, no more than the window (16) is ever sent: the count the server saw is
     * taken when the oldest request has timed out, so it covers the whole silent period, with no
     * sleep racing the 1.5 s timeout. Nothing completes before that timeout: a silent server answers
     * nothing, so every other call can only end with the reset the timeout causes (indeterminate).
     */
    @Test
    void inFlightNeverExceedsTheWindowWhenTheServerStopsAnswering() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().maxInFlight(16)
                     .requestTimeout(Duration.ofMillis(1500)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            server.silent = true;
            List<CompletableFuture<Ack>> futures = new ArrayList<>();
            CompletableFuture<Long> atTimeout = new CompletableFuture<>();
            for (int i = 0; i < 100; i++) {
                futures.add(q.put(bytes("id-" + i), 0, 0, null, bytes("body")));
            }
            futures.get(0).whenComplete((ack, t) -> atTimeout.complete(server.count(Opcode.PUT)));

            // The oldest times out; the connection is reset, so everything else is lost with it.
            assertThat(await(futures.get(0)).status()).isEqualTo(Status.TIMEOUT);
            assertThat(await(atTimeout)).as("puts the server received while silent").isLessThanOrEqualTo(16);
            for (CompletableFuture<Ack> f : futures.subList(1, futures.size())) {
                assertThat(await(f).status().isIndeterminate()).isTrue();
            }
            // The window was full (frames still in the socket at the reset are read by the server).
            eventually(Duration.ofSeconds(10), () -> server.count(Opcode.PUT) >= 16);
            assertThat(server.count(Opcode.PUT)).isEqualTo(16);
        }
    }

    @Test
    void callsBeyondThePendingLimitFailAtOnce() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().maxInFlight(1).maxPending(4).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            server.silent = true;
            List<CompletableFuture<Ack>> futures = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                futures.add(q.put(bytes("id-" + i), 0, 0, null, bytes("body")));
            }
            long waiting = futures.stream().filter(f -> !f.isDone()).count();
            assertThat(waiting).isLessThanOrEqualTo(5);
            assertThat(await(futures.get(19)).status()).isEqualTo(Status.BACKLOG_FULL);
            assertThat(await(futures.get(19)).reason()).contains("backlog");
        }
    }
}
