package org.jameskvs.protocol;

/**
 * Byte layout of the wire's {@code message record} (GET's answer, READ's records; see the package
 * doc). The server's journal stores a PUT as its record header followed by exactly these bytes, so
 * it answers GET and READ by copying them; a change here is a change of the journal format too.
 * <pre>
 *  0       i64  position
 *  8       u8   id length L (1..255)
 *  9       id
 *  9+L     u8   priority
 * 10+L     i64  notBefore
 * 18+L     i32  state length S
 * 22+L     state
 * 22+L+S   i32  body length B
 * 26+L+S   body
 * </pre>
 */
public final class MessageRecordDescriptor {
    public static final int POSITION_OFFSET = 0;
    public static final int ID_LENGTH_OFFSET = 8;
    public static final int ID_OFFSET = 9;
    /** Offsets after the id, relative to {@code ID_OFFSET + L}. */
    public static final int PRIORITY_AFTER_ID = 0;
    public static final int NOT_BEFORE_AFTER_ID = 1;
    public static final int STATE_LENGTH_AFTER_ID = 9;
    public static final int STATE_AFTER_ID = 13;
    /** Bytes between the id and the state: priority, notBefore, state length. */
    public static final int FIXED_AFTER_ID = STATE_AFTER_ID;
    /** Bytes of the body length field that follows the state. */
    public static final int BODY_LENGTH_SIZE = 4;
    /** Smallest record: 1-byte id, empty state and body. */
    public static final int MIN_LENGTH = ID_OFFSET + 1 + FIXED_AFTER_ID + BODY_LENGTH_SIZE;

    private MessageRecordDescriptor() {
    }

    /** Length of a record with these field lengths. */
    public static long length(int idLength, int stateLength, int bodyLength) {
        return (long) ID_OFFSET + idLength + FIXED_AFTER_ID + stateLength + BODY_LENGTH_SIZE + bodyLength;
    }
}
