package org.jameskvs.protocol;

/**
 * Emitted by {@link FrameDecoder} in place of a frame longer than the limit. Its bytes are skipped
 * (framing is kept) and the receiver answers {@link Status#FRAME_TOO_LARGE}.
 */
public record OversizedFrame(byte opcode, long sequence, long length) {
}
