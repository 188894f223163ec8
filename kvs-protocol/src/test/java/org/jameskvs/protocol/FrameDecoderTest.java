package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FrameDecoderTest {

    private static ByteBuf twoPuts() {
        ByteBuf out = Unpooled.buffer();
        Requests.put(out, 7, 3, "id-1".getBytes(StandardCharsets.UTF_8), 5, 0, new byte[]{1, 2}, "hello".getBytes(StandardCharsets.UTF_8));
        Requests.delete(out, 8, 3, "id-1".getBytes(StandardCharsets.UTF_8));
        return out;
    }

    @Test
    void decodesFramesSplitAcrossReadsAtEveryByte() {
        ByteBuf all = twoPuts();
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1 << 20));
        while (all.isReadable()) {
            ch.writeInbound(all.readRetainedSlice(1));
        }
        all.release();
        ByteBuf put = ch.readInbound();
        assertThat(Frames.requestOpcode(put)).isEqualTo(Opcode.PUT.code());
        assertThat(Frames.requestSequence(put)).isEqualTo(7);
        assertThat(Frames.requestHandle(put)).isEqualTo(3);
        Frames.skipRequestHeader(put);
        assertThat(Wire.readId(put)).isEqualTo("id-1".getBytes(StandardCharsets.UTF_8));
        assertThat(Wire.readUnsignedByte(put)).isEqualTo(5);
        assertThat(Wire.readLong(put)).isZero();
        assertThat(Wire.readBlob(put)).containsExactly(1, 2);
        assertThat(new String(Wire.readTail(put), StandardCharsets.UTF_8)).isEqualTo("hello");
        put.release();
        ByteBuf del = ch.readInbound();
        assertThat(Frames.requestOpcode(del)).isEqualTo(Opcode.DELETE.code());
        assertThat(Frames.requestSequence(del)).isEqualTo(8);
        del.release();
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void readsAreSplitInPlaceAndOnlyTheStraddlingFrameIsCopied() {
        CountingAllocator alloc = new CountingAllocator();
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(FrameDecoder.forRequests(1 << 20));
        ByteBuf all = Unpooled.buffer();
        for (int i = 0; i < 10; i++) {
            Requests.delete(all, i, 3, ("id-" + i).getBytes(StandardCharsets.UTF_8));
        }
        int frame = all.readableBytes() / 10;
        // reads of 2.5 frames: every other read ends inside a frame
        int read = frame * 5 / 2;
        int reads = 0;
        while (all.isReadable()) {
            ch.writeInbound(all.readRetainedSlice(Math.min(read, all.readableBytes())));
            reads++;
        }
        all.release();
        for (int i = 0; i < 10; i++) {
            ByteBuf f = ch.readInbound();
            assertThat(Frames.requestSequence(f)).isEqualTo(i);
            f.release();
        }
        // one frame-sized buffer per read that ended inside a frame, never a copy of a whole read
        assertThat(alloc.allocated).hasSizeLessThanOrEqualTo(reads);
        assertThat(alloc.allocated).allSatisfy(b -> assertThat(b.capacity()).isLessThanOrEqualTo(Math.max(frame, 64)));
        assertThat(ch.finish()).isFalse();
        assertThat(alloc.allocated).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    @Test
    void aFrameCutByTheEndOfTheConnectionLeaksNothing() {
        CountingAllocator alloc = new CountingAllocator();
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.config().setAllocator(alloc);
        ch.pipeline().addLast(FrameDecoder.forRequests(1 << 20));
        ByteBuf all = twoPuts();
        ByteBuf firstAndHalf = all.readRetainedSlice(all.readableBytes() - 5);
        all.release();
        ch.writeInbound(firstAndHalf);
        ByteBuf put = ch.readInbound();
        put.release();
        assertThat(alloc.allocated).hasSize(1);
        assertThat(ch.finish()).isFalse();
        assertThat(firstAndHalf.refCnt()).isZero();
        assertThat(alloc.allocated.get(0).refCnt()).isZero();
    }

    /** Records the buffers the decoder allocates (for the frame that straddles two reads). */
    private static final class CountingAllocator extends io.netty.buffer.AbstractByteBufAllocator {
        final java.util.List<ByteBuf> allocated = new java.util.ArrayList<>();

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            return record(Unpooled.directBuffer(initialCapacity, maxCapacity));
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            return record(Unpooled.buffer(initialCapacity, maxCapacity));
        }

        private ByteBuf record(ByteBuf b) {
            allocated.add(b);
            return b;
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }

    @Test
    void oversizedFrameIsSkippedAcrossReadsAndFramingKept() {
        ByteBuf big = Unpooled.buffer();
        Requests.put(big, 1, 1, "big".getBytes(StandardCharsets.UTF_8), 0, 0, new byte[0], new byte[5000]);
        ByteBuf small = Unpooled.buffer();
        Requests.empty(small, Opcode.PING, 2, 0);
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1000));
        ch.writeInbound(big.readRetainedSlice(30));
        OversizedFrame marker = ch.readInbound();
        assertThat(marker.sequence()).isEqualTo(1);
        assertThat(marker.opcode()).isEqualTo(Opcode.PUT.code());
        ch.writeInbound(big.readRetainedSlice(big.readableBytes() - 10));
        assertThat((Object) ch.readInbound()).isNull();
        ch.writeInbound(Unpooled.wrappedBuffer(big.readRetainedSlice(10), small));
        big.release();
        ByteBuf ping = ch.readInbound();
        assertThat(Frames.requestOpcode(ping)).isEqualTo(Opcode.PING.code());
        assertThat(Frames.requestSequence(ping)).isEqualTo(2);
        ping.release();
        ch.finish();
    }

    @Test
    void lengthBelowHeaderLosesFraming() {
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(1000));
        ByteBuf bad = Unpooled.buffer().writeInt(3).writeBytes(new byte[3]);
        assertThatThrownBy(() -> ch.writeInbound(bad)).isInstanceOf(FramingLostException.class);
    }

    @Test
    void unknownVersionLosesFramingNamingBothVersionsFromTheReadersSide() {
        EmbeddedChannel server = new EmbeddedChannel(FrameDecoder.forRequests(1000));
        ByteBuf request = Unpooled.buffer().writeInt(16).writeByte(9).writeBytes(new byte[15]);
        assertThatThrownBy(() -> server.writeInbound(request)).isInstanceOf(FramingLostException.class)
                .hasMessage("server speaks protocol version 2, client sent 9");
        EmbeddedChannel client = new EmbeddedChannel(FrameDecoder.forResponses(1000));
        ByteBuf response = Unpooled.buffer().writeInt(20).writeByte(200).writeBytes(new byte[19]);
        assertThatThrownBy(() -> client.writeInbound(response)).isInstanceOf(FramingLostException.class)
                .hasMessage("client speaks protocol version 2, server sent 200");
    }

    @Test
    void truncatedPayloadFieldIsAMalformedPayloadNotAnOverread() {
        ByteBuf frame = Unpooled.buffer().writeShort(10).writeBytes(new byte[3]);
        assertThatThrownBy(() -> Wire.readString(frame)).isInstanceOf(MalformedPayloadException.class);
        ByteBuf blob = Unpooled.buffer().writeInt(-1);
        assertThatThrownBy(() -> Wire.readBlob(blob)).isInstanceOf(MalformedPayloadException.class);
    }

    @Test
    void messageRecordRoundTrips() {
        ByteBuf out = Unpooled.buffer();
        StoredMessage.writeRecord(out, 42, new byte[]{9}, 7, 1234, Unpooled.wrappedBuffer(new byte[]{1}),
                Unpooled.wrappedBuffer(new byte[]{2, 3}));
        assertThat(StoredMessage.readRecord(out))
                .isEqualTo(new StoredMessage(42, new byte[]{9}, 7, 1234, new byte[]{1}, new byte[]{2, 3}));
    }

    @Test
    void errorResponseCarriesStatusSequenceAndReason() {
        ByteBuf out = Unpooled.buffer();
        Frames.writeError(out, Opcode.PUT.code(), Status.DUPLICATE_ID, 99, 12, "dup");
        EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forResponses(1000));
        ch.writeInbound(out);
        ByteBuf frame = ch.readInbound();
        assertThat(Frames.responseStatus(frame)).isEqualTo(Status.DUPLICATE_ID);
        assertThat(Frames.responseSequence(frame)).isEqualTo(99);
        assertThat(Frames.responseTxn(frame)).isEqualTo(12);
        Frames.skipResponseHeader(frame);
        assertThat(Wire.readString(frame)).isEqualTo("dup");
        frame.release();
    }
}
