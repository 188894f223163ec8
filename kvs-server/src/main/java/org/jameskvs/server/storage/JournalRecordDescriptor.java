package org.jameskvs.server.storage;

import org.jameskvs.protocol.MessageRecordDescriptor;

/**
 * Byte layout of one journal record. Records are laid out back to back inside blocks, one block per
 * Chronicle Queue document ({@link JournalBlockDescriptor}); a record's <i>location</i> is the file
 * offset of its first byte, wherever it sits in its block.
 *
 * <p>All fields are big-endian (network order), not Chronicle's native little-endian, for one
 * reason: from offset {@link #POSITION} to the end, a PUT/COPY record is byte for byte the wire
 * protocol's {@code message record} ({@link MessageRecordDescriptor}, written by
 * {@link org.jameskvs.protocol.MessageRecord}), so GET and READ copy it from the journal into the
 * response buffer with one positioned read and no re-encoding. So that layout is part of the
 * journal format: a change of it (a new protocol version's record) needs a new record layout
 * version here, and replay of the old one.
 *
 * <h2>Common header (20 bytes)</h2>
 * <pre>
 *  0  i32  CRC32C of bytes [4, length)   detects torn writes and bit flips
 *  4  i32  length: bytes of this record  (the next record of the block starts right after)
 *  8  u8   type (constants below)
 *  9  u8   record layout version = 3   (2: written before REBASE carried the next position;
 *                                      1: before CREATE carried the sequence and digest; both still
 *                                      read. Journal format 2, blocks, only groups records)
 * 10  u16  queue id (small int, mapped to a name by the latest CREATE of that id)
 * 12  i64  txn of the queue after this record (COPY and CREATE carry the unchanged txn)
 * </pre>
 *
 * <h2>PUT and COPY</h2>
 * <pre>
 * 20       i64  position            } wire message record starts here
 * 28       u8   id length L (1..255)
 * 29       id
 * 29+L     u8   priority
 * 30+L     i64  notBefore
 * 38+L     i32  state length S
 * 42+L     state
 * 42+L+S   i32  body length B
 * 46+L+S   body                     } wire message record ends with the record
 * </pre>
 * A COPY is a PUT re-appended by compaction (same position, current state), which moves the
 * message's live location to the new record; its txn is not a mutation.
 *
 * <h2>DELETE</h2>  20 i64 position, 28 u8 L, 29 id.
 * <h2>REPLACE</h2> 20 i64 position, 28 u8 L, 29 id, 29+L u8 priority, 30+L i64 notBefore,
 * 38+L i32 S, 42+L state. Bytes [29+L, end) are the wire's {@code u8 priority, i64 notBefore,
 * blob state}, so a replaced message is emitted as PUT[20, 29+L) + REPLACE[29+L, end) + PUT body blob.
 * <h2>CLEAR, DROP</h2> header only.
 * <h2>OWNER</h2> 20 i64 epoch, 28 u16 length + UTF-8 owner.
 * <h2>CREATE</h2> (also the metadata checkpoint written by compaction and after a recovery that
 * found the queue damaged)
 * <pre>
 * 20 i64 maxMessages, 28 i64 maxBytes, 36 i64 nextPosition, 44 i64 epoch,
 * 52 u16 length + UTF-8 name, then u16 length + UTF-8 owner,
 *    then (layout version 2 only) i64 seq, i64 digest: the queue's {@link QueueDigest} state here,
 *    then, only when the queue is damaged: i64 damagedFromTxn, i64 damagedToTxn ({@link QueueDamage})
 * </pre>
 * The seq and digest are where replay starts a queue whose earlier records compaction deleted;
 * where replay has the queue's earlier records, it keeps the digest it recomputed from them, and a
 * checkpoint that disagrees shows that one of them was lost.
 * <h2>REBASE</h2> 20 i64 seq, 28 i64 digest, then (layout 3) 36 i64 next position: this copy was
 * rebuilt from another one and takes over that one's sequence, digest and next position (txn
 * unchanged: not a mutation). A layout 2 REBASE, without the next position, leaves it as it is.
 * <p><b>Positions</b> (layout 3 and on): a PUT's position is its seq (the queue's seq after it), or
 * the queue's next position when that is higher (a queue whose positions were counted by PUTs
 * before); a rebuild's copy PUTs carry the source's positions. So two copies with the same history
 * give a message the same position, and the positions in the records replay unchanged.
 * <h2>SKIP</h2> 20 i64 seq, 28 u8 type of the refused mutation, 29 u16 status: a sequenced
 * mutation the store refused (NOT_FOUND, DUPLICATE_ID, ..., DISK_FULL) still takes its seq, so the copies'
 * sequences stay in step; the refusal is folded into the digest (txn unchanged).
 * <h2>COMMIT</h2> 20 i64 committed seq: the queue's commit point as its writer declared it (flag
 * 0x0008 or the COMMIT request), written when it rises (txn unchanged: not a mutation). The latest
 * one pins its file like a CREATE; compaction writes it again before deleting the file. A journal
 * without it (every earlier one) leaves the queue without a commit point: readers see everything.
 * The damage tail keeps a queue marked damaged across restarts once the damaged journal file itself
 * is gone (compaction deletes it); a reader that stops after the owner ignores it.
 * A VOID type is never written; an unknown type is treated like a bad checksum.
 */
final class JournalRecordDescriptor {
    static final int CRC = 0;
    static final int LENGTH = 4;
    static final int TYPE = 8;
    static final int VERSION = 9;
    static final int QUEUE_ID = 10;
    static final int TXN = 12;
    static final int HEADER_SIZE = 20;

    /** Start of the wire message record in PUT/COPY, and of the position in DELETE/REPLACE. */
    static final int POSITION = HEADER_SIZE + MessageRecordDescriptor.POSITION_OFFSET;
    static final int ID_LENGTH = HEADER_SIZE + MessageRecordDescriptor.ID_LENGTH_OFFSET;
    static final int ID = HEADER_SIZE + MessageRecordDescriptor.ID_OFFSET;
    /** Bytes of a PUT after the id up to the state: priority, notBefore, stateLength (1+8+4). */
    static final int AFTER_ID_FIXED = MessageRecordDescriptor.FIXED_AFTER_ID;

    static final int OWNER_EPOCH = 20;
    static final int OWNER_NAME = 28;

    static final int CREATE_MAX_MESSAGES = 20;
    static final int CREATE_MAX_BYTES = 28;
    static final int CREATE_NEXT_POSITION = 36;
    static final int CREATE_EPOCH = 44;
    static final int CREATE_NAME = 52;

    /** Version of the record layout above (the block layout has its own, {@link JournalBlockDescriptor#FORMAT_VERSION}). */
    static final byte RECORD_VERSION = 3;
    /** The layout before REBASE carried the next position: still read. */
    static final byte RECORD_VERSION_2 = 2;
    /** The layout before CREATE carried seq and digest: still read. */
    static final byte RECORD_VERSION_1 = 1;

    static final byte TYPE_CREATE = 1;
    static final byte TYPE_PUT = 2;
    static final byte TYPE_DELETE = 3;
    static final byte TYPE_REPLACE = 4;
    static final byte TYPE_CLEAR = 5;
    static final byte TYPE_DROP = 6;
    static final byte TYPE_OWNER = 7;
    static final byte TYPE_COPY = 8;
    static final byte TYPE_REBASE = 9;
    static final byte TYPE_SKIP = 10;
    /** The writer's commit point (see {@link QueueStore#commitPoint}): 20 i64 committed seq; txn unchanged. */
    static final byte TYPE_COMMIT = 11;
    static final int COMMIT_SEQ = 20;
    static final int SKIP_SEQ = 20;
    static final int SKIP_OP = 28;
    static final int SKIP_STATUS = 29;
    static final int REBASE_SEQ = 20;
    static final int REBASE_DIGEST = 28;
    /** Layout 3: the source's next position (a REBASE record shorter than {@link #REBASE_LENGTH} has none). */
    static final int REBASE_NEXT_POSITION = 36;
    static final int REBASE_LENGTH = 44;

    /** Highest queue id: ids are u16. */
    static final int MAX_QUEUE_ID = 0xFFFF;

    private JournalRecordDescriptor() {
    }

    static String typeName(int type) {
        return switch (type) {
            case TYPE_CREATE -> "CREATE";
            case TYPE_PUT -> "PUT";
            case TYPE_DELETE -> "DELETE";
            case TYPE_REPLACE -> "REPLACE";
            case TYPE_CLEAR -> "CLEAR";
            case TYPE_DROP -> "DROP";
            case TYPE_OWNER -> "OWNER";
            case TYPE_COPY -> "COPY";
            case TYPE_REBASE -> "REBASE";
            case TYPE_SKIP -> "SKIP";
            case TYPE_COMMIT -> "COMMIT";
            default -> "UNKNOWN(" + type + ")";
        };
    }

    /** Offset in a PUT/COPY of the body blob (its i32 length), from the record length and body length. */
    static long bodyBlobOffset(int recordLength, int bodyLength) {
        return (long) recordLength - bodyLength - 4;
    }
}
