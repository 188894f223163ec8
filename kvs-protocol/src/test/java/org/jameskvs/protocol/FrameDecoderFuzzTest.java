package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random bytes, split at random points, into the decoder and then into the payload readers: the
 * only outcomes allowed are frames, oversized markers, {@link FramingLostException} or
 * {@link MalformedPayloadException}; never an over-read, never another exception, never a leak of
 * the frame bounds. The seed is printed; {@code -Dfuzz.seed=N} replays a run exactly.
 */
class FrameDecoderFuzzTest {

    @Test
    void randomInputOnlyYieldsFramesOrDocumentedErrors() {
        long seed = Long.getLong("fuzz.seed", System.nanoTime());
        System.out.println("FrameDecoderFuzzTest seed=" + seed + " (replay with -Dfuzz.seed=" + seed + ")");
        Random rnd = new Random(seed);
        int frames = 0;
        int lost = 0;
        int malformed = 0;
        for (int round = 0; round < 2000; round++) {
            EmbeddedChannel ch = new EmbeddedChannel(FrameDecoder.forRequests(4096));
            byte[] input = randomStream(rnd);
            int at = 0;
            try {
                while (at < input.length) {
                    int n = 1 + rnd.nextInt(input.length - at);
                    ch.writeInbound(Unpooled.wrappedBuffer(input, at, n));
                    at += n;
                    Object out;
                    while ((out = ch.readInbound()) != null) {
                        if (out instanceof ByteBuf frame) {
                            frames++;
                            malformed += parseAsEveryOpcode(frame);
                            frame.release();
                        } else {
                            assertThat(out).isInstanceOf(OversizedFrame.class);
                        }
                    }
                }
            } catch (DecoderException e) {
                assertThat(e).isInstanceOf(FramingLostException.class);
                lost++;
            }
            ch.finishAndReleaseAll();
        }
        System.out.printf("decoder fuzz: frames=%d framingLost=%d malformedPayloads=%d%n", frames, lost, malformed);
        assertThat(frames).isPositive();
    }

    /** Mostly plausible frames (right version, small lengths) with random payloads, sometimes pure noise. */
    private static byte[] randomStream(Random rnd) {
        ByteBuf b = Unpooled.buffer();
        int count = 1 + rnd.nextInt(5);
        for (int i = 0; i < count; i++) {
            if (rnd.nextInt(10) == 0) {
                byte[] noise = new byte[rnd.nextInt(40)];
                rnd.nextBytes(noise);
                b.writeBytes(noise);
                continue;
            }
            int payload = rnd.nextInt(rnd.nextInt(10) == 0 ? 8000 : 300);
            b.writeInt(RequestDescriptor.HEADER_SIZE + payload);
            b.writeByte(ProtocolVersion.CURRENT);
            b.writeByte(1 + rnd.nextInt(13));
            b.writeShort(0);
            b.writeLong(rnd.nextLong());
            b.writeInt(rnd.nextInt(4));
            byte[] p = new byte[payload];
            rnd.nextBytes(p);
            b.writeBytes(p);
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    /** Runs the payload readers the server uses over the frame; counts MalformedPayloadException. */
    private static int parseAsEveryOpcode(ByteBuf frame) {
        int malformed = 0;
        for (int kind = 0; kind < 4; kind++) {
            ByteBuf in = frame.duplicate();
            Frames.skipRequestHeader(in);
            try {
                switch (kind) {
                    case 0 -> {
                        Wire.readId(in);
                        Wire.readUnsignedByte(in);
                        Wire.readLong(in);
                        int len = Wire.readBlobLength(in);
                        in.skipBytes(len);
                    }
                    case 1 -> {
                        Wire.readString(in);
                        Wire.readString(in);
                    }
                    case 2 -> StoredMessage.readRecord(in);
                    default -> {
                        Wire.readString(in);
                        Wire.readUnsignedByte(in);
                        Wire.readLong(in);
                        Wire.readLong(in);
                        Wire.readLong(in);
                        Wire.readString(in);
                    }
                }
            } catch (MalformedPayloadException e) {
                malformed++;
            }
            assertThat(in.readerIndex()).isLessThanOrEqualTo(frame.writerIndex());
        }
        return malformed;
    }
}
