package org.jameskvs.protocol;

/** The mode of an OPEN request. */
public enum OpenMode {
    READ(0), WRITE(1);

    private final int code;

    OpenMode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** @return the mode, or {@code null} for an unknown code. */
    public static OpenMode fromCode(int code) {
        return code == 0 ? READ : code == 1 ? WRITE : null;
    }
}
