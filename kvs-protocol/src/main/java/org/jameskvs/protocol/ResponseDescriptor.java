package org.jameskvs.protocol;

/** Byte offsets of the response frame header; see the diagram in {@link org.jameskvs.protocol}. */
public final class ResponseDescriptor {
    public static final int LENGTH_FIELD_SIZE = 4;
    /** Offsets below are relative to the first byte after the length field. */
    public static final int VERSION_OFFSET = 0;
    public static final int OPCODE_OFFSET = 1;
    public static final int STATUS_OFFSET = 2;
    public static final int SEQUENCE_OFFSET = 4;
    public static final int TXN_OFFSET = 12;
    public static final int PAYLOAD_OFFSET = 20;
    public static final int HEADER_SIZE = PAYLOAD_OFFSET;

    private ResponseDescriptor() {
    }
}
