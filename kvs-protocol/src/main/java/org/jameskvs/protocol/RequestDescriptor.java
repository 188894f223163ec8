package org.jameskvs.protocol;

/** Byte offsets of the request frame header; see the diagram in {@link org.jameskvs.protocol}. */
public final class RequestDescriptor {
    public static final int LENGTH_OFFSET = 0;
    public static final int LENGTH_FIELD_SIZE = 4;
    /** Offsets below are relative to the first byte after the length field. */
    public static final int VERSION_OFFSET = 0;
    public static final int OPCODE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int SEQUENCE_OFFSET = 4;
    public static final int HANDLE_OFFSET = 12;
    public static final int PAYLOAD_OFFSET = 16;
    /** Bytes after the length field that every request has. */
    public static final int HEADER_SIZE = PAYLOAD_OFFSET;

    /**
     * PUT flag: if a live message has the id, the new one replaces it in one atomic step (one journal
     * record: after a crash either the old or the new version is there, never neither). The new
     * version gets a new position. Without the flag such a PUT is answered DUPLICATE_ID.
     */
    public static final int FLAG_REPLACE_EXISTING = 0x0001;

    /**
     * PUT, DELETE, REPLACE, CLEAR flag: the payload starts with an {@code i64 queue seq} (&gt;= 1)
     * that the queue's one writer gave this mutation; the server applies it only as the queue's
     * next seq, answers a repeat with the stored outcome and refuses a gap ({@code SEQ_GAP}).
     * Without the flag the server numbers the mutation itself (single-server clients).
     */
    public static final int FLAG_SEQUENCED = 0x0002;

    /**
     * PUT flag: the payload starts (after the queue seq when {@link #FLAG_SEQUENCED} is set too) with
     * an {@code i64 position} (&gt;= 1) the message takes instead of the one the server would give:
     * a rebuild copies its source's messages with their positions, so the copies agree.
     */
    public static final int FLAG_POSITIONED = 0x0004;

    /**
     * Sequenced mutation flag (only with {@link #FLAG_SEQUENCED}): right after the {@code i64 queue
     * seq} comes an {@code i64 committed seq}, the highest seq of the queue its writer knows held by
     * both copies; the server keeps it as the queue's commit point (monotonic, at most its last seq)
     * and READ and GET on a read handle show no message above it (see the protocol's package doc).
     */
    public static final int FLAG_COMMITTED = 0x0008;

    /**
     * READ and GET flag: show the copy as it is, ignoring the queue's commit point (operators and
     * tests inspecting one copy; James' readers never set it).
     */
    public static final int FLAG_UNCOMMITTED = 0x0010;

    /**
     * REBASE flag: a conditional REBASE. After {@code i64 seq, i64 digest, i64 next position (0: keep)}
     * comes {@code i64 expected digest}: the copy takes the new digest only if it is at exactly that seq
     * with the expected digest (OK too when it is already at the seq with the new digest: a repeat);
     * otherwise NOT_FOUND, nothing changed. The writer aligns two copies whose live content it knows
     * to be equal while their digests differ by refusals one copy alone made (DISK_FULL), checking at
     * the same time that the copy holds exactly the history the writer computed for it.
     */
    public static final int FLAG_IF_AT = 0x0020;

    private RequestDescriptor() {
    }
}
