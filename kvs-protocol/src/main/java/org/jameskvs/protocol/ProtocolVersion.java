package org.jameskvs.protocol;

/**
 * The protocol version this code speaks. A peer sending another version loses its connection: the
 * server answers {@code BAD_FRAME} with a reason naming both versions
 * ({@link FrameKind#versionMismatch}) and closes; a client reading a response of another version
 * fails the connection with the same kind of reason.
 */
public final class ProtocolVersion {
    public static final byte CURRENT = 1;

    private ProtocolVersion() {
    }
}
