package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * COMMIT (0x0F), on a write handle. Request payload: {@code i64 committed seq}, the writer's commit
 * point when it has no sequenced mutation to carry it (see "The commit point" in the package doc).
 * OK answer: empty.
 */
public final class CommitCodec {
    private CommitCodec() {
    }

    public static void writeRequest(ByteBuf out, long seq, int handle, long committed) {
        int start = Frames.beginRequest(out, Opcode.COMMIT, seq, handle);
        out.writeLong(committed);
        Frames.finishFrame(out, start);
    }

    /** @throws MalformedPayloadException when truncated or negative */
    public static long readRequest(ByteBuf in) {
        long committed = Wire.readLong(in);
        if (committed < 0) {
            throw new MalformedPayloadException("committed seq must be >= 0, got " + committed);
        }
        return committed;
    }

    public static void writeOk(ByteBuf out, long seq, long txn) {
        Frames.writeEmptyOk(out, Opcode.COMMIT.code(), seq, txn);
    }
}
