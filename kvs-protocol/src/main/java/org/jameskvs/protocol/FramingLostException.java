package org.jameskvs.protocol;

import io.netty.handler.codec.CorruptedFrameException;

/** The byte stream can no longer be split into frames; the only safe reaction is to close the connection. */
public final class FramingLostException extends CorruptedFrameException {
    public FramingLostException(String message) {
        super(message);
    }
}
