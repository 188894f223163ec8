package org.jameskvs.server.storage;

/**
 * Byte layout of one journal <i>block</i>: the raw content of one Chronicle Queue document (Chronicle's
 * own 4-byte document header precedes it and is not part of the block). A block holds the records
 * ({@link JournalRecordDescriptor}) written between two group commits: the server applies the
 * requests it has read from its connections, then commits, and the commit closes the block. One document per
 * block instead of one per record is what makes a record cheap to append: Chronicle's per-document
 * work (write lock, header, index entry) is paid once per group commit.
 *
 * <h2>Journal format version 2</h2>
 * <pre>
 *  0  i32  magic 0x4B56424B ("KVBK")
 *  4  i32  0         where a version-1 document has its record's length (at least 20, never 0):
 *                    this field alone tells the two layouts apart
 *  8  i32  journal format version = 2
 * 12  records, back to back, each with its own length and CRC32C; the last one ends exactly where
 *     Chronicle's document ends
 * </pre>
 * Big-endian, like the records. A block is never empty: it is opened by its first record.
 *
 * <h2>Version 1 (read, never written)</h2>
 * Journals written before blocks hold one bare record per document (record offset 0 = document
 * offset 0). Recovery reads them as one-record blocks, so a version-1 journal opens unchanged; new
 * records go into version-2 blocks behind it, and compaction and file deletion retire the old
 * documents in time.
 *
 * <h2>Atomicity</h2>
 * Chronicle makes a document visible only when it is closed (its header carries the length only
 * then), so a process killed mid-block leaves nothing of that block that a reader sees, and the
 * next writer takes the unfinished header over. A block that is visible but damaged (a power cut
 * that wrote back only part of its pages, a flipped bit on disk) is found by its records' CRCs; what
 * recovery then does is in {@link Recovery}.
 */
final class JournalBlockDescriptor {
    static final int MAGIC = 0;
    static final int NOT_A_RECORD_LENGTH = 4;
    static final int VERSION = 8;
    static final int HEADER_SIZE = 12;

    static final int MAGIC_VALUE = 0x4B56424B;
    static final int FORMAT_VERSION = 2;

    /** The header every block starts with. */
    static final byte[] HEADER = {0x4B, 0x56, 0x42, 0x4B, 0, 0, 0, 0, 0, 0, 0, FORMAT_VERSION};

    private JournalBlockDescriptor() {
    }
}
