package org.jameskvs.protocol;

/** Response status codes. Codes are part of the wire format: never renumber. */
public enum Status {
    OK(0, "ok"),
    AUTH_REQUIRED(1, "authenticate first"),
    AUTH_FAILED(2, "bad credentials"),
    UNKNOWN_OPCODE(3, "unknown opcode"),
    BAD_REQUEST(4, "malformed request payload"),
    BAD_HANDLE(5, "unknown or closed queue handle"),
    NO_SUCH_QUEUE(6, "no such queue"),
    DUPLICATE_ID(7, "a live message with this id exists"),
    NOT_FOUND(8, "no live message with this id"),
    QUEUE_FULL(9, "queue limit reached"),
    DISK_FULL(10, "server disk full"),
    STALE_EPOCH(11, "a newer epoch owns this queue"),
    QUEUE_LOCKED(12, "another connection holds the write handle at this epoch"),
    READ_ONLY(13, "handle opened read-only"),
    FRAME_TOO_LARGE(14, "frame exceeds the server's maximum"),
    BAD_FRAME(15, "framing lost"),
    STORAGE_ERROR(16, "storage failure"),
    SHUTTING_DOWN(17, "server shutting down"),
    INTERNAL_ERROR(18, "internal error"),
    TIMEOUT(19, "no response in time (client side)"),
    CONNECTION_LOST(20, "connection lost before a response (client side)"),
    BACKLOG_FULL(21, "client backlog full, nothing sent (client side)"),
    /** A sequenced mutation beyond the queue's next seq: not applied; the payload's reason is followed by the server's i64 last seq. */
    SEQ_GAP(22, "mutation sequence number beyond the queue's next one"),
    /** A repeat of a sequenced mutation whose outcome the server no longer keeps (it was applied or refused long ago). */
    SEQ_TOO_OLD(23, "repeat of a sequence number whose outcome is no longer kept"),
    /**
     * An OPEN that named the store it expects (the server's {@code store.id}) reached another one:
     * the server lost its disk since. Refused before anything is created or fenced.
     */
    STORE_CHANGED(24, "the server's store is not the one the client expected: it lost its disk");

    private static final Status[] BY_CODE = new Status[64];

    static {
        for (Status s : values()) {
            BY_CODE[s.code] = s;
        }
    }

    private final int code;
    private final String description;

    Status(int code, String description) {
        this.code = code;
        this.description = description;
    }

    public int code() {
        return code;
    }

    public String description() {
        return description;
    }

    /** True when the outcome of the request is unknown (the request may or may not have been applied). */
    public boolean isIndeterminate() {
        return this == TIMEOUT || this == CONNECTION_LOST;
    }

    /**
     * True for the answers to a sequenced mutation that consumed its queue seq on the server: OK
     * (applied), a final refusal (the mutation can never apply, so resending it would be refused the
     * same way), or DISK_FULL (the store is at its limit for this mutation; one copy may be full while
     * the other took the PUT): the server keeps each refusal as a SKIP at that seq, in the store's
     * reserve, so the copies stay in step. Any other answer (STORAGE_ERROR, ...: the store failed, even
     * to record a refusal) left the seq to the next mutation sent; the writer must not count it as held
     * by that copy. The server ({@code RequestDispatcher}) and the replication client both decide with this.
     */
    public boolean takesQueueSeq() {
        return this == OK || isFinalRefusal() || this == DISK_FULL;
    }

    /** The server's store could not write (disk full, journal over its limit, an I/O error): the node, not the request, is at fault. */
    public boolean isStoreFailure() {
        return this == DISK_FULL || this == STORAGE_ERROR;
    }

    /** A refusal that the same mutation would get again: not found, duplicate id, queue full, malformed. */
    public boolean isFinalRefusal() {
        return this == NOT_FOUND || this == DUPLICATE_ID || this == QUEUE_FULL || this == BAD_REQUEST;
    }

    /** @return the status, or {@link #INTERNAL_ERROR} for a code this version does not know. */
    public static Status fromCode(int code) {
        Status s = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
        return s == null ? INTERNAL_ERROR : s;
    }
}
