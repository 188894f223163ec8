package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Status;

/** Turns a response into the caller's result type, for OK and for every other status alike. */
interface ResultDecoder<T> {
    /** @param payload the frame after the response header; throws on malformed input */
    T ok(long txn, ByteBuf payload);

    T failed(Status status, long txn, String reason);

    /** An error answer with payload after its reason ({@code SEQ_GAP}: the server's last seq). */
    default T failed(Status status, long txn, String reason, ByteBuf rest) {
        return failed(status, txn, reason);
    }
}
