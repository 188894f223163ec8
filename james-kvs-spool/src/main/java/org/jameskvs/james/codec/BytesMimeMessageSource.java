package org.jameskvs.james.codec;

import java.io.ByteArrayInputStream;
import java.io.InputStream;

import org.apache.james.server.core.MimeMessageSource;

/**
 * The MIME bytes of a decoded mail, served from the KVS body they came in. Wrapped in James's
 * {@code MimeMessageWrapper}, an unmodified message is written back byte for byte and parsed only if
 * someone looks inside; no copy of the bytes is made.
 */
public final class BytesMimeMessageSource implements MimeMessageSource {
    private final String sourceId;
    private final byte[] buffer;
    private final int offset;
    private final int length;

    public BytesMimeMessageSource(String sourceId, byte[] buffer, int offset, int length) {
        this.sourceId = sourceId;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
    }

    @Override
    public String getSourceId() {
        return sourceId;
    }

    @Override
    public InputStream getInputStream() {
        return new ByteArrayInputStream(buffer, offset, length);
    }

    @Override
    public long getMessageSize() {
        return length;
    }
}
