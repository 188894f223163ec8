package org.jameskvs.protocol;

/**
 * The protocol version this code speaks. A peer sending another version loses its connection: the
 * server answers {@code BAD_FRAME} with a reason naming both versions
 * ({@link FrameKind#versionMismatch}) and closes; a client reading a response of another version
 * fails the connection with the same kind of reason.
 */
public final class ProtocolVersion {
    /** 2: OPEN and STAT answers end with the queue's last seq and digest; REBASE. */
    public static final byte CURRENT = 2;

    private ProtocolVersion() {
    }
}
