package org.jameskvs.james.queue;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** KVS message ids of queued mail: one random id per enqueued copy (a mail name may be enqueued twice). */
final class MessageIds {
    private MessageIds() {
    }

    static byte[] newId() {
        return UUID.randomUUID().toString().getBytes(StandardCharsets.US_ASCII);
    }

    static String asString(byte[] id) {
        return new String(id, StandardCharsets.US_ASCII);
    }
}
