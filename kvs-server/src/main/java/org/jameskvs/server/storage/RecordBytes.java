package org.jameskvs.server.storage;

import io.netty.buffer.ByteBuf;
import net.openhft.chronicle.bytes.Bytes;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** Moves the pieces of a journal record (Netty buffers) into Chronicle's bytes and its CRC, without allocating per record. */
final class RecordBytes {
    private RecordBytes() {
    }

    static long readable(ByteBuf b) {
        return b == null ? 0 : b.readableBytes();
    }

    /** CRC of the readable bytes, without the ByteBuffer views {@code nioBuffers()} would allocate per call. */
    static void updateCrc(CRC32C crc, ByteBuf b) {
        if (b == null || !b.isReadable()) {
            return;
        }
        if (b.hasArray()) {
            crc.update(b.array(), b.arrayOffset() + b.readerIndex(), b.readableBytes());
        } else if (b.nioBufferCount() == 1) {
            crc.update(b.internalNioBuffer(b.readerIndex(), b.readableBytes()));
        } else {
            for (ByteBuffer bb : b.nioBuffers(b.readerIndex(), b.readableBytes())) {
                crc.update(bb);
            }
        }
    }

    static void copy(Bytes<?> bytes, ByteBuf b) {
        if (b == null || !b.isReadable()) {
            return;
        }
        if (b.hasArray()) {
            bytes.write(b.array(), b.arrayOffset() + b.readerIndex(), b.readableBytes());
            return;
        }
        if (b.nioBufferCount() == 1) {
            // The buffer's reusable internal view: no allocation per record.
            write(bytes, b.internalNioBuffer(b.readerIndex(), b.readableBytes()));
            return;
        }
        for (ByteBuffer bb : b.nioBuffers(b.readerIndex(), b.readableBytes())) {
            write(bytes, bb);
        }
    }

    private static void write(Bytes<?> bytes, ByteBuffer bb) {
        while (bb.hasRemaining()) {
            bytes.writeSome(bb);
        }
    }
}
