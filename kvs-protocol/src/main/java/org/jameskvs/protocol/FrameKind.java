package org.jameskvs.protocol;

/**
 * Which frames a {@link FrameSplitter} reads, and so which side of the connection it runs on:
 * requests are read by the server, responses by the client. Gives the smallest valid frame (the
 * header size) and the names used when the peer's frames carry another protocol version.
 */
public enum FrameKind {
    REQUEST(RequestDescriptor.HEADER_SIZE, "server", "client"),
    RESPONSE(ResponseDescriptor.HEADER_SIZE, "client", "server");

    private final int headerSize;
    private final String reader;
    private final String writer;

    FrameKind(int headerSize, String reader, String writer) {
        this.headerSize = headerSize;
        this.reader = reader;
        this.writer = writer;
    }

    /** Bytes after the length field that every frame of this kind has: anything shorter loses framing. */
    public int headerSize() {
        return headerSize;
    }

    /** The reason given when a frame of this kind carries {@code sent}, e.g. "server speaks protocol version 1, client sent 2". */
    public String versionMismatch(int sent) {
        return reader + " speaks protocol version " + ProtocolVersion.CURRENT + ", " + writer + " sent " + sent;
    }
}
