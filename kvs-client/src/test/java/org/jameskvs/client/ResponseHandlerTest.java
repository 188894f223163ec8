package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.jameskvs.protocol.FrameDecoder;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.jameskvs.protocol.Wire;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jameskvs.client.TestSupport.bytes;

/** The connection's pipeline on an EmbeddedChannel: writes, window, and matching of split responses. */
class ResponseHandlerTest {
    private EmbeddedChannel channel;
    private ClientConnection connection;
    private final List<ClientConnection> lost = new ArrayList<>();

    @BeforeEach
    void setUp() {
        setUp(KvsClientConfig.builder().maxInFlight(3).build());
    }

    private void setUp(KvsClientConfig config) {
        channel = new EmbeddedChannel();
        connection = new ClientConnection(channel, config, lost::add, new SendProgress());
        channel.pipeline().addLast(connection.newResponseHandler());
        connection.markReady();
    }

    private CompletableFuture<Ack> ping() {
        return connection.submit(new Request<>(Opcode.PING, 0, 64, System.nanoTime() + 5_000_000_000L,
                (out, seq, h) -> Requests.empty(out, Opcode.PING, seq, 0), ResultDecoders.ACK_WITH_VALUE));
    }

    private CompletableFuture<GetResult> get(String id) {
        return connection.submit(new Request<>(Opcode.GET, 9, 64, System.nanoTime() + 5_000_000_000L,
                (out, seq, h) -> Requests.get(out, seq, h, bytes(id)), ResultDecoders.GET));
    }

    /** Every request frame written so far, as (opcode, sequence) pairs. */
    private List<long[]> written() {
        EmbeddedChannel splitter = new EmbeddedChannel(FrameDecoder.forRequests(1 << 20));
        ByteBuf out;
        while ((out = channel.readOutbound()) != null) {
            splitter.writeInbound(out);
        }
        List<long[]> frames = new ArrayList<>();
        ByteBuf frame;
        while ((frame = splitter.readInbound()) != null) {
            frames.add(new long[]{Frames.requestOpcode(frame), Frames.requestSequence(frame), Frames.requestHandle(frame)});
            frame.release();
        }
        return frames;
    }

    private static void pong(ByteBuf out, long seq, long time) {
        int start = Frames.beginResponse(out, Opcode.PING.code(), Status.OK, seq, 0);
        out.writeLong(time);
        Frames.finishFrame(out, start);
    }

    /** Delivers the bytes one at a time: every frame is split across reads. */
    private void receiveByteByByte(ByteBuf bytes) {
        while (bytes.isReadable()) {
            channel.writeInbound(bytes.readRetainedSlice(1));
        }
        bytes.release();
    }

    @Test
    void writesInOneBatchAndMatchesSplitResponsesInOrder() {
        CompletableFuture<Ack> a = ping();
        CompletableFuture<GetResult> b = get("m1");
        CompletableFuture<Ack> c = ping();
        channel.runPendingTasks();
        assertThat(channel.outboundMessages()).hasSize(1);
        List<long[]> frames = written();
        assertThat(frames).extracting(f -> f[1]).containsExactly(1L, 2L, 3L);
        assertThat(frames.get(1)[2]).isEqualTo(9);

        ByteBuf in = Unpooled.buffer();
        pong(in, 1, 111);
        int start = Frames.beginResponse(in, Opcode.GET.code(), Status.OK, 2, 42);
        StoredMessage.writeRecord(in, 5, bytes("m1"), 3, 99, Unpooled.wrappedBuffer(bytes("s")), Unpooled.wrappedBuffer(bytes("body")));
        Frames.finishFrame(in, start);
        Frames.writeError(in, Opcode.PING.code(), Status.SHUTTING_DOWN, 3, 0, "bye");
        receiveByteByByte(in);

        assertThat(a.join().value()).isEqualTo(111);
        GetResult got = b.join();
        assertThat(got.txn()).isEqualTo(42);
        assertThat(got.message()).isEqualTo(new StoredMessage(5, bytes("m1"), 3, 99, bytes("s"), bytes("body")));
        assertThat(c.join().status()).isEqualTo(Status.SHUTTING_DOWN);
        assertThat(c.join().reason()).isEqualTo("bye");
        assertThat(connection.inFlight()).isZero();
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void windowLimitsWritesAndAnswersOpenIt() {
        List<CompletableFuture<Ack>> futures = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            futures.add(ping());
        }
        channel.runPendingTasks();
        assertThat(written()).hasSize(3);
        assertThat(connection.inFlight()).isEqualTo(3);

        ByteBuf in = Unpooled.buffer();
        pong(in, 1, 1);
        channel.writeInbound(in);
        assertThat(futures.get(0).join().isOk()).isTrue();
        assertThat(written()).extracting(f -> f[1]).containsExactly(4L);
        assertThat(futures.get(4)).isNotDone();
    }

    @Test
    void outOfOrderResponseFailsEverythingAndClosesTheConnection() {
        CompletableFuture<Ack> a = ping();
        CompletableFuture<Ack> b = ping();
        channel.runPendingTasks();
        ByteBuf in = Unpooled.buffer();
        pong(in, 2, 0);
        pong(in, 1, 0);
        channel.writeInbound(in);
        assertThat(a.join().status()).isEqualTo(Status.CONNECTION_LOST);
        assertThat(b.join().status()).isEqualTo(Status.CONNECTION_LOST);
        assertThat(a.join().reason()).contains("protocol error");
        assertThat(channel.isOpen()).isFalse();
        assertThat(lost).containsExactly(connection);
        assertThat(connection.isReady()).isFalse();
        // After the failure new calls complete at once.
        assertThat(ping().join().status()).isEqualTo(Status.CONNECTION_LOST);
    }

    @Test
    void responseWithoutARequestIsAProtocolError() {
        ByteBuf in = Unpooled.buffer();
        pong(in, 1, 0);
        channel.writeInbound(in);
        assertThat(channel.isOpen()).isFalse();
        assertThat(lost).hasSize(1);
    }

    @Test
    void oversizedResponseFailsOnlyItsRequest() {
        setUp(KvsClientConfig.builder().maxFrameBytes(64).build());
        CompletableFuture<GetResult> big = get("big");
        CompletableFuture<Ack> after = ping();
        channel.runPendingTasks();
        ByteBuf in = Unpooled.buffer();
        int start = Frames.beginResponse(in, Opcode.GET.code(), Status.OK, 1, 0);
        StoredMessage.writeRecord(in, 1, bytes("big"), 0, 0, Unpooled.EMPTY_BUFFER, Unpooled.wrappedBuffer(new byte[500]));
        Frames.finishFrame(in, start);
        pong(in, 2, 7);
        receiveByteByByte(in);
        assertThat(big.join().status()).isEqualTo(Status.FRAME_TOO_LARGE);
        assertThat(after.join().value()).isEqualTo(7);
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void malformedPayloadFailsOnlyItsRequest() {
        CompletableFuture<GetResult> bad = get("x");
        CompletableFuture<Ack> after = ping();
        channel.runPendingTasks();
        ByteBuf in = Unpooled.buffer();
        int start = Frames.beginResponse(in, Opcode.GET.code(), Status.OK, 1, 0);
        in.writeLong(1);
        Wire.writeString(in, "");
        Frames.finishFrame(in, start);
        pong(in, 2, 7);
        channel.writeInbound(in);
        assertThat(bad.join().status()).isEqualTo(Status.INTERNAL_ERROR);
        assertThat(after.join().isOk()).isTrue();
    }

    @Test
    void channelCloseFailsInFlightAndWaitingCalls() {
        setUp(KvsClientConfig.builder().maxInFlight(1).build());
        CompletableFuture<Ack> inFlight = ping();
        channel.runPendingTasks();
        CompletableFuture<Ack> waiting = ping();
        channel.close();
        channel.runPendingTasks();
        assertThat(inFlight.join().status()).isEqualTo(Status.CONNECTION_LOST);
        assertThat(waiting.join().status()).isEqualTo(Status.CONNECTION_LOST);
        assertThat(lost).containsExactly(connection);
    }

    @Test
    void encodingFailureFailsOnlyThatCall() {
        CompletableFuture<Ack> bad = connection.submit(new Request<>(Opcode.AUTH, 0, 64, System.nanoTime() + 5_000_000_000L,
                (out, seq, h) -> Requests.auth(out, seq, "x".repeat(70_000), ""), ResultDecoders.ACK));
        CompletableFuture<Ack> good = ping();
        channel.runPendingTasks();
        assertThat(bad.join().status()).isEqualTo(Status.BAD_REQUEST);
        assertThat(written()).extracting(f -> f[1]).containsExactly(1L);
        assertThat(good).isNotDone();
    }
}
