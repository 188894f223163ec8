package org.jameskvs.protocol;

import io.netty.buffer.ByteBuf;

import java.util.Arrays;

/**
 * A message as a reader sees it: a decoded {@code message record}. Used on the client side, where
 * the bytes go on to the application anyway; the server copies records straight from its journal
 * ({@link MessageRecord}).
 */
public record StoredMessage(long position, byte[] id, int priority, long notBefore, byte[] state, byte[] body) {

    /** {@link MessageRecord#read}. */
    public static StoredMessage readRecord(ByteBuf in) {
        return MessageRecord.read(in);
    }

    /** {@link MessageRecord#write}: state and body are copied from the given buffers (readable bytes). */
    public static void writeRecord(ByteBuf out, long position, byte[] id, int priority, long notBefore,
                                   ByteBuf state, ByteBuf body) {
        MessageRecord.write(out, position, id, priority, notBefore, state, body);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredMessage m && position == m.position && priority == m.priority
                && notBefore == m.notBefore && Arrays.equals(id, m.id) && Arrays.equals(state, m.state)
                && Arrays.equals(body, m.body);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(position) * 31 + Arrays.hashCode(id);
    }

    @Override
    public String toString() {
        return "StoredMessage{position=" + position + ", id=" + new String(id, java.nio.charset.StandardCharsets.UTF_8)
                + ", priority=" + priority + ", notBefore=" + notBefore + ", state=" + state.length + "B, body="
                + body.length + "B}";
    }
}
