package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;

import java.util.concurrent.CompletableFuture;

/**
 * One call from submission to completion, and at the same time the future the caller holds: one
 * object per call instead of a request plus a future. It knows what to encode and how to decode
 * the answer. The handle is fixed at submission because a handle is only valid on the connection it
 * was opened on.
 *
 * <p>Calls off the hot path encode through an {@link Encoder} lambda; the hot ones (PUT, DELETE)
 * are subclasses that keep their arguments in fields and encode them directly
 * ({@link PutRequest}, {@link IdRequest}), so a call allocates no lambda.
 */
class Request<T> extends CompletableFuture<T> {
    /** Writes the whole frame; a lambda over the call's arguments. */
    @FunctionalInterface
    interface Encoder {
        void encode(ByteBuf out, long sequence, int handle);
    }

    final Opcode opcode;
    final int handle;
    /** Expected frame size, so a big body gets a buffer of its own size instead of being regrown. */
    final int sizeHint;
    final long deadlineNanos;
    private final Encoder encoder;
    private final ResultDecoder<T> decoder;
    /** Assigned on the event loop when the frame is encoded. */
    long sequence;

    Request(Opcode opcode, int handle, int sizeHint, long deadlineNanos, Encoder encoder, ResultDecoder<T> decoder) {
        this.opcode = opcode;
        this.handle = handle;
        this.sizeHint = sizeHint;
        this.deadlineNanos = deadlineNanos;
        this.encoder = encoder;
        this.decoder = decoder;
    }

    final void encode(ByteBuf out, long seq) {
        sequence = seq;
        encodeFrame(out, seq, handle);
    }

    /** Writes the request frame; subclasses without an {@link Encoder} override this. */
    void encodeFrame(ByteBuf out, long seq, int handle) {
        encoder.encode(out, seq, handle);
    }

    final void completeOk(long txn, ByteBuf payload) {
        T result;
        try {
            result = decoder.ok(txn, payload);
        } catch (RuntimeException e) {
            // Framing is intact, so only this answer is lost; the connection goes on.
            result = decoder.failed(Status.INTERNAL_ERROR, txn, "malformed " + opcode + " response: " + e.getMessage());
        }
        complete(result);
    }

    final void completeError(Status status, long txn, String reason) {
        complete(decoder.failed(status, txn, reason));
    }

    final void completeError(Status status, long txn, String reason, ByteBuf rest) {
        complete(decoder.failed(status, txn, reason, rest));
    }

    final void fail(Status status, String reason) {
        completeError(status, -1, reason);
    }

    /** The failed result without a request: for calls refused before they are submitted. */
    static <T> CompletableFuture<T> failed(ResultDecoder<T> decoder, Status status, String reason) {
        return CompletableFuture.completedFuture(decoder.failed(status, -1, reason));
    }
}
