package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Requests;

/** PUT, with its arguments in fields rather than captured by a lambda (the hot path: one object per call). */
final class PutRequest extends Request<Ack> {
    private final int flags;
    private final byte[] id;
    private final int priority;
    private final long notBefore;
    private final byte[] state;
    private final byte[] body;

    PutRequest(int handle, long deadlineNanos, int flags, byte[] id, int priority, long notBefore, byte[] state,
               byte[] body, int sizeHint) {
        super(Opcode.PUT, handle, sizeHint, deadlineNanos, null, ResultDecoders.ACK_WITH_VALUE);
        this.flags = flags;
        this.id = id;
        this.priority = priority;
        this.notBefore = notBefore;
        this.state = state;
        this.body = body;
    }

    @Override
    void encodeFrame(ByteBuf out, long seq, int handle) {
        Requests.put(out, seq, handle, flags, id, priority, notBefore, state, body);
    }
}
