package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * STAT (0x08). Request payload: empty. OK answer: {@code i64 size, i64 bytes, i64 firstPosition,
 * i64 nextPosition, i64 earliestNotBefore, i64 epoch, string owner, u8 queue flags, i64 last seq,
 * i64 digest, i64 store}. {@link Answer} reads the OK answer.
 */
public final class StatCodec {
    private StatCodec() {
    }

    public static void writeRequest(ByteBuf out, long seq, int handle) {
        Requests.empty(out, Opcode.STAT, seq, handle);
    }

    public static void writeOk(ByteBuf out, long seq, long txn, long size, long bytes, long firstPosition,
                               long nextPosition, long earliestNotBefore, long epoch, String owner, int queueFlags,
                               long lastSeq, long digest, long store) {
        int start = Frames.beginResponse(out, Opcode.STAT.code(), Status.OK, seq, txn);
        out.writeLong(size);
        out.writeLong(bytes);
        out.writeLong(firstPosition);
        out.writeLong(nextPosition);
        out.writeLong(earliestNotBefore);
        out.writeLong(epoch);
        Wire.writeString(out, owner == null ? "" : owner);
        CopyCheckAnswer.writeCheck(out, queueFlags, lastSeq, digest, store);
        Frames.finishFrame(out, start);
    }

    /** Reader of the OK answer. */
    public static final class Answer extends CopyCheckAnswer {
        private long size;
        private long bytes;
        private long firstPosition;
        private long nextPosition;
        private long earliestNotBefore;
        private long epoch;
        private String owner;

        /** The fields, then the copy-check tail ({@link CopyCheckAnswer}). */
        public Answer wrap(ByteBuf p) {
            size = Wire.readLong(p);
            bytes = Wire.readLong(p);
            firstPosition = Wire.readLong(p);
            nextPosition = Wire.readLong(p);
            earliestNotBefore = Wire.readLong(p);
            epoch = Wire.readLong(p);
            owner = Wire.readString(p);
            readCheck(p);
            return this;
        }

        public long size() {
            return size;
        }

        public long bytes() {
            return bytes;
        }

        public long firstPosition() {
            return firstPosition;
        }

        public long nextPosition() {
            return nextPosition;
        }

        public long earliestNotBefore() {
            return earliestNotBefore;
        }

        public long epoch() {
            return epoch;
        }

        public String owner() {
            return owner;
        }
    }
}
