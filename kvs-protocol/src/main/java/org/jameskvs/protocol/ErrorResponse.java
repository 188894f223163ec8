package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The payload of every response whose status is not {@code OK}: {@code string reason}, and for
 * {@link Status#SEQ_GAP} then {@code i64} the queue's last seq (see the package doc).
 */
public final class ErrorResponse {
    /** A reason longer than this many chars is cut (it is for humans and logs). */
    public static final int MAX_REASON_CHARS = 1000;

    private ErrorResponse() {
    }

    /** Writes a whole error response: header plus the reason ({@code null}: the status's description). */
    public static void write(ByteBuf out, byte opcode, Status status, long sequence, long txn, String reason) {
        int start = Frames.beginResponse(out, opcode, status, sequence, txn);
        writeReason(out, status, reason);
        Frames.finishFrame(out, start);
    }

    /** Writes a whole {@link Status#SEQ_GAP} response: the reason, then the queue's last seq. */
    public static void writeSeqGap(ByteBuf out, byte opcode, long sequence, long txn, String reason, long lastSeq) {
        int start = Frames.beginResponse(out, opcode, Status.SEQ_GAP, sequence, txn);
        writeReason(out, Status.SEQ_GAP, reason);
        out.writeLong(lastSeq);
        Frames.finishFrame(out, start);
    }

    private static void writeReason(ByteBuf out, Status status, String reason) {
        String r = reason == null ? status.description() : reason;
        if (r.length() > MAX_REASON_CHARS) {
            r = r.substring(0, MAX_REASON_CHARS);
        }
        Wire.writeString(out, r);
    }

    /**
     * Reads the reason of an error payload (reader index at the payload); tolerates a peer that sent
     * none or a malformed one (the status's description then).
     */
    public static String readReason(ByteBuf payload, Status status) {
        if (payload.readableBytes() < 2) {
            return status.description();
        }
        try {
            return Wire.readString(payload);
        } catch (MalformedPayloadException e) {
            return status.description();
        }
    }

    /** After {@link #readReason}: SEQ_GAP's last seq; 0 for other statuses or when absent. */
    public static long readSeqGapLastSeq(Status status, ByteBuf rest) {
        return status == Status.SEQ_GAP && rest.readableBytes() >= 8 ? rest.readLong() : 0;
    }
}
