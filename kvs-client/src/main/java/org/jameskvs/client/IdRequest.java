package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;

/** A request whose payload is just a message id (DELETE, GET), without a lambda per call. */
final class IdRequest<T> extends Request<T> {
    private final byte[] id;

    IdRequest(Opcode opcode, int handle, long deadlineNanos, byte[] id, int sizeHint, ResultDecoder<T> decoder) {
        super(opcode, handle, sizeHint, deadlineNanos, null, decoder);
        this.id = id;
    }

    @Override
    void encodeFrame(ByteBuf out, long seq, int handle) {
        switch (opcode) {
            case DELETE -> Requests.delete(out, seq, handle, id);
            case GET -> Requests.get(out, seq, handle, id);
            default -> throw new IllegalStateException(opcode + " does not carry just an id");
        }
    }
}
