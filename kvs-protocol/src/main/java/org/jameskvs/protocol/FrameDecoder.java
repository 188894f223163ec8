package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;

/**
 * Splits the byte stream into frames (either direction: request and response frames share the
 * length prefix and the version byte). Emits a {@link ByteBuf} holding one frame <i>without</i> its
 * length field (the receiver releases it), an {@link OversizedFrame} for a frame over the limit
 * (whose bytes are then skipped across reads, keeping framing), or throws
 * {@link FramingLostException} for a length below the minimum header or an unknown version.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    private final int maxFrameLength;
    private final int minFrameLength;
    private long bytesToSkip;

    /**
     * @param maxFrameLength largest accepted frame, counting the bytes after the length field
     * @param minFrameLength smallest valid frame (the header size of the frames this side reads)
     */
    public FrameDecoder(int maxFrameLength, int minFrameLength) {
        this.maxFrameLength = maxFrameLength;
        this.minFrameLength = minFrameLength;
    }

    public static FrameDecoder forRequests(int maxFrameLength) {
        return new FrameDecoder(maxFrameLength, RequestDescriptor.HEADER_SIZE);
    }

    public static FrameDecoder forResponses(int maxFrameLength) {
        return new FrameDecoder(maxFrameLength, ResponseDescriptor.HEADER_SIZE);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (true) {
            if (bytesToSkip > 0) {
                int skip = (int) Math.min(bytesToSkip, in.readableBytes());
                in.skipBytes(skip);
                bytesToSkip -= skip;
                if (bytesToSkip > 0) {
                    return;
                }
            }
            // Wait for length + version + opcode + flags + sequence (enough to answer an oversized frame).
            if (in.readableBytes() < 4) {
                return;
            }
            int start = in.readerIndex();
            long length = in.getUnsignedInt(start);
            if (length < minFrameLength) {
                in.skipBytes(in.readableBytes());
                throw new FramingLostException("frame length " + length + " below the minimum of " + minFrameLength);
            }
            if (in.readableBytes() >= 5) {
                byte version = in.getByte(start + 4);
                if (version != ProtocolVersion.CURRENT) {
                    in.skipBytes(in.readableBytes());
                    throw new FramingLostException("unsupported protocol version " + version);
                }
            }
            if (length > maxFrameLength) {
                if (in.readableBytes() < 4 + RequestDescriptor.SEQUENCE_OFFSET + 8) {
                    return;
                }
                byte opcode = in.getByte(start + 4 + RequestDescriptor.OPCODE_OFFSET);
                long sequence = in.getLong(start + 4 + RequestDescriptor.SEQUENCE_OFFSET);
                in.skipBytes(4);
                bytesToSkip = length;
                out.add(new OversizedFrame(opcode, sequence, length));
                continue;
            }
            if (in.readableBytes() < 4 + length) {
                return;
            }
            in.skipBytes(4);
            out.add(in.readRetainedSlice((int) length));
        }
    }
}
