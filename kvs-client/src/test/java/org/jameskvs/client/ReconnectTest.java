package org.jameskvs.client;

import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.OpenMode;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.jameskvs.client.TestSupport.await;
import static org.jameskvs.client.TestSupport.bytes;
import static org.jameskvs.client.TestSupport.eventually;

class ReconnectTest {

    @Test
    void serverDisconnectLosesInFlightCallsThenReconnectsAndReopens() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config()
                     .reconnectBackoff(Duration.ofMillis(300), Duration.ofMillis(300)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 7).withLimits(100, 0))).orThrow();
            assertThat(await(q.put(bytes("a"), 0, 0, null, bytes("A"))).isOk()).isTrue();

            server.silent = true;
            List<CompletableFuture<Ack>> inFlight = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                inFlight.add(q.put(bytes("b" + i), 0, 0, null, bytes("B")));
            }
            eventually(Duration.ofSeconds(2), () -> server.count(Opcode.PUT) == 4);
            server.disconnectAll();
            server.silent = false;
            for (CompletableFuture<Ack> f : inFlight) {
                assertThat(await(f).status()).isEqualTo(Status.CONNECTION_LOST);
            }
            // Disconnected: calls fail fast instead of queueing.
            assertThat(await(q.put(bytes("c"), 0, 0, null, bytes("C"))).status()).isEqualTo(Status.CONNECTION_LOST);

            eventually(Duration.ofSeconds(5), () -> await(q.stat()).isOk());
            assertThat(client.isConnected()).isTrue();
            assertThat(server.connections.get()).isGreaterThanOrEqualTo(2);

            List<FakeKvsServer.Opened> opens = new ArrayList<>(server.opens);
            FakeKvsServer.Opened first = opens.get(0);
            FakeKvsServer.Opened last = opens.get(opens.size() - 1);
            assertThat(last.queue()).isEqualTo("spool");
            assertThat(last.mode()).isEqualTo(OpenMode.WRITE);
            assertThat(last.epoch()).isEqualTo(7);
            assertThat(last.owner()).isEqualTo("node-1");
            assertThat(last.handle()).isNotEqualTo(first.handle());

            assertThat(await(q.put(bytes("d"), 0, 0, null, bytes("D"))).isOk()).isTrue();
            FakeKvsServer.Received lastPut = server.log.stream().filter(r -> r.opcode() == Opcode.PUT)
                    .reduce((a, b) -> b).orElseThrow();
            assertThat(lastPut.handle()).isEqualTo(last.handle());
            assertThat(client.lastResponseNanos()).isGreaterThan(0);
        }
    }

    @Test
    void reopenAnsweredQueueLockedIsRetried() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config()
                     .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            server.lockedOpens.set(2);
            server.disconnectAll();
            eventually(Duration.ofSeconds(5), () -> await(q.stat()).isOk());
            assertThat(server.count(Opcode.OPEN)).isEqualTo(4);
        }
    }

    @Test
    void queueTakenOverWhileDisconnectedIsEndedWithStaleEpoch() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient old = KvsClient.connect(server.config()
                     .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).build());
             KvsClient successor = KvsClient.connect(server.config().build())) {
            KvsQueue q = await(old.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            await(successor.open("spool", OpenOptions.writer("node-2", 2))).orThrow();
            server.disconnectAll();
            eventually(Duration.ofSeconds(5), () -> await(q.stat()).status() == Status.STALE_EPOCH);
            assertThat(await(q.put(bytes("x"), 0, 0, null, bytes("x"))).status()).isEqualTo(Status.STALE_EPOCH);
            assertThat(old.isConnected()).isTrue();
        }
    }

    /**
     * With {@code reopenOnSameStoreOnly} (the replication's clients): a server back from another
     * store (it lost its disk) refuses the handle's re-open, which names the store that answered its
     * first OPEN, and the handle ends with STORE_CHANGED instead of writing on an emptied store. A
     * server back with its store re-opens as before.
     */
    @Test
    void aHandleIsReopenedOnlyOnTheStoreThatFirstAnsweredIt() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().reopenOnSameStoreOnly(true)
                     .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            server.disconnectAll();
            eventually(Duration.ofSeconds(5), () -> server.count(Opcode.OPEN) == 2 && await(q.stat()).isOk());

            server.store = 0x5107f;
            server.disconnectAll();
            eventually(Duration.ofSeconds(5), () -> await(q.stat()).status() == Status.STORE_CHANGED);
            assertThat(await(q.put(bytes("x"), 0, 0, null, bytes("x"))).status()).isEqualTo(Status.STORE_CHANGED);
            assertThat(server.count(Opcode.PUT)).as("nothing written on the new store").isZero();
            assertThat(server.opens).as("the refused re-open took nothing").hasSize(2);
        }
    }

    /** By default (a single server, nothing to protect elsewhere) the handle goes on on the new store. */
    @Test
    void byDefaultAHandleIsReopenedOnAnotherStoreToo() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config()
                     .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            try (LogCapture log = new LogCapture()) {
                server.store = 0x5107f;
                server.disconnectAll();
                eventually(Duration.ofSeconds(5), () -> server.count(Opcode.OPEN) == 2 && await(q.stat()).isOk());
                assertThat(log.lines()).as("an operator is told the server lost what it held").anyMatch(l -> l.matches(
                        ".*ERROR .*queue spool re-opened after reconnect on another store .*\\(5107f where it was 5107e\\).*"));
            }
            assertThat(await(q.put(bytes("x"), 0, 0, null, bytes("x"))).isOk()).isTrue();
        }
    }

    /**
     * A frame that takes longer than the request timeout to get through (the server reads it
     * slowly) is not timed out while the server keeps draining it: the timeout counts from its last
     * drained byte. (The socket buffers, a few MB, must then drain within one request timeout.)
     */
    @Test
    void aLargeFrameTheServerKeepsReadingIsNotTimedOut() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().requestTimeout(Duration.ofMillis(1000)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            server.readSlowly(2); // at most 64 KiB per 2 ms: 48 MiB take 1.5 s or more
            long start = System.nanoTime();
            Ack ack = q.put(bytes("large"), 0, 0, null, new byte[48 << 20]).get(120, java.util.concurrent.TimeUnit.SECONDS);
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(ack.status()).as("%s after %d ms", ack.reason(), elapsedMillis).isEqualTo(Status.OK);
            assertThat(elapsedMillis).as("the precondition: it outlasted the request timeout").isGreaterThan(1000L);
            assertThat(server.connections.get()).as("no reset").isEqualTo(1);
        }
    }

    /**
     * A server that stops reading: the bytes the socket buffers take at once prove nothing, so a
     * large frame still being sent times out as any request does.
     */
    @Test
    void aLargeFrameToAServerThatStoppedReadingTimesOut() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().requestTimeout(Duration.ofMillis(300)).build())) {
            KvsQueue q = await(client.open("spool", OpenOptions.writer("node-1", 1))).orThrow();
            server.readSlowly(0);
            Ack ack = q.put(bytes("large"), 0, 0, null, new byte[32 << 20]).get(120, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(ack.status()).as("%s", ack.reason()).isEqualTo(Status.TIMEOUT);
        }
    }

    @Test
    void timedOutRequestResetsTheConnection() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p");
             KvsClient client = KvsClient.connect(server.config().requestTimeout(Duration.ofMillis(300))
                     .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build())) {
            server.silent = true;
            long start = System.nanoTime();
            Ack ack = await(client.ping());
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(ack.status()).isEqualTo(Status.TIMEOUT);
            // Not before the request timeout (how long after it depends on the machine's load: not asserted).
            assertThat(elapsedMillis).isGreaterThanOrEqualTo(250L);

            server.silent = false;
            eventually(Duration.ofSeconds(5), client::isConnected);
            Ack pong = await(client.ping());
            assertThat(pong.isOk()).isTrue();
            assertThat(pong.value()).isCloseTo(System.currentTimeMillis(), org.assertj.core.data.Offset.offset(5000L));
            assertThat(server.connections.get()).isGreaterThanOrEqualTo(2); // the timeout closed the first one
        }
    }

    @Test
    void badCredentialsFailTheConnect() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p")) {
            assertThatThrownBy(() -> KvsClient.connect(server.config().credentials("u", "wrong").build()))
                    .isInstanceOf(KvsException.class)
                    .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(Status.AUTH_FAILED))
                    .hasMessageContaining("bad user or password");
        }
    }

    @Test
    void unreachableServerFailsTheConnect() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        KvsClientConfig config = KvsClientConfig.builder().host("127.0.0.1").port(port).build();
        assertThatThrownBy(() -> KvsClient.connect(config))
                .isInstanceOf(KvsException.class)
                .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(Status.CONNECTION_LOST));
    }

    @Test
    void closedClientFailsCallsAtOnce() throws Exception {
        try (FakeKvsServer server = new FakeKvsServer("u", "p")) {
            KvsClient client = KvsClient.connect(server.config().build());
            KvsQueue q = await(client.open("spool", OpenOptions.reader())).orThrow();
            client.close();
            assertThat(client.isConnected()).isFalse();
            assertThat(await(client.ping()).status()).isEqualTo(Status.CONNECTION_LOST);
            assertThat(await(q.stat()).status()).isEqualTo(Status.CONNECTION_LOST);
        }
    }
}
