package org.jameskvs.protocol;

/** The protocol version this code speaks. A peer sending another version loses its connection. */
public final class ProtocolVersion {
    public static final byte CURRENT = 1;

    private ProtocolVersion() {
    }
}
