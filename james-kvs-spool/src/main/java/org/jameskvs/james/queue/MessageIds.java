package org.jameskvs.james.queue;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * KVS message ids of queued mail: ASCII {@code <16 hex digits>-<counter in hex>}. The first part is
 * drawn from a SecureRandom once per JVM, the counter counts up: unique across restarts and James
 * nodes (a collision needs two JVMs drawing the same 64-bit prefix), and cheap, unlike a
 * {@code UUID.randomUUID()} per mail, which goes through the SecureRandom every time.
 */
final class MessageIds {
    private static final String PREFIX = String.format("%016x-", new SecureRandom().nextLong());
    private static final AtomicLong COUNTER = new AtomicLong();

    private MessageIds() {
    }

    static byte[] newId() {
        return (PREFIX + Long.toHexString(COUNTER.incrementAndGet())).getBytes(StandardCharsets.US_ASCII);
    }

    static String asString(byte[] id) {
        return new String(id, StandardCharsets.US_ASCII);
    }
}
