package org.jameskvs.protocol;

/** Request operations. Codes are part of the wire format: never renumber. */
public enum Opcode {
    AUTH(0x01, false),
    OPEN(0x02, false),
    PUT(0x03, true),
    DELETE(0x04, true),
    REPLACE(0x05, true),
    GET(0x06, false),
    READ(0x07, false),
    STAT(0x08, false),
    LIST(0x09, false),
    CLEAR(0x0A, true),
    DROP(0x0B, true),
    PING(0x0C, false),
    CLOSE(0x0D, false),
    /** A rebuilt copy takes over its source's last seq and digest (needs a write handle). */
    REBASE(0x0E, true),
    /** The writer's commit point, when it has no mutation to carry it (needs a write handle; no transaction). */
    COMMIT(0x0F, true);

    private static final Opcode[] BY_CODE = new Opcode[256];

    static {
        for (Opcode op : values()) {
            BY_CODE[op.code] = op;
        }
    }

    private final int code;
    private final boolean mutation;

    Opcode(int code, boolean mutation) {
        this.code = code;
        this.mutation = mutation;
    }

    public byte code() {
        return (byte) code;
    }

    /** True for operations that change a queue (and so need a write handle; all but REBASE and COMMIT bump its transaction number). */
    public boolean isMutation() {
        return mutation;
    }

    /** @return the opcode, or {@code null} when the byte is not a known opcode (no exception on the hot path). */
    public static Opcode fromCode(byte code) {
        return BY_CODE[code & 0xFF];
    }
}
