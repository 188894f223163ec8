package org.jameskvs.server.storage;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

import static org.jameskvs.server.storage.JournalRecordDescriptor.*;

/**
 * Finds the records of one journal document, read into a byte array, and checks each one's length,
 * CRC32C and layout version: a version-2 block ({@link JournalBlockDescriptor}) holds records back
 * to back up to the document's end; a version-1 document is one bare record. Recovery and the
 * repair of a damaged file both decide with it what is intact.
 *
 * <p>After {@link #check}, the records in {@code [firstRecord(), intactEnd())} are intact, in order,
 * whether or not a later one was bad. Not thread-safe (one reusable checksum).
 */
final class JournalBlockReader {
    private final CRC32C crc = new CRC32C();
    private int firstRecord;
    private int intactEnd;
    private int intactRecords;
    private boolean block;

    /**
     * Checks the document in {@code doc[0, n)}.
     *
     * @return null when every record in it is intact, else why not
     */
    String check(byte[] doc, int n) {
        ByteBuffer bb = ByteBuffer.wrap(doc, 0, n);
        block = n >= JournalBlockDescriptor.HEADER_SIZE
                && bb.getInt(JournalBlockDescriptor.MAGIC) == JournalBlockDescriptor.MAGIC_VALUE
                && bb.getInt(JournalBlockDescriptor.NOT_A_RECORD_LENGTH) == 0;
        firstRecord = block ? JournalBlockDescriptor.HEADER_SIZE : 0;
        intactEnd = firstRecord;
        intactRecords = 0;
        if (block && bb.getInt(JournalBlockDescriptor.VERSION) != JournalBlockDescriptor.FORMAT_VERSION) {
            return "unknown journal block format version " + bb.getInt(JournalBlockDescriptor.VERSION);
        }
        int at = firstRecord;
        do {
            String bad = checkRecord(doc, bb, at, n - at);
            if (bad != null) {
                return intactRecords == 0 ? bad : bad + " (record " + (intactRecords + 1) + " of its block)";
            }
            at += bb.getInt(at + LENGTH);
            intactEnd = at;
            intactRecords++;
        } while (block && at < n);
        // A version-1 document may be longer than its record (the record's length is its real end).
        return null;
    }

    /**
     * What lies past the intact run of a document {@link #check} found bad: each record whose end
     * can be trusted (its length leads exactly to the document's end or to a record whose CRC
     * holds) is reported as intact or as bad-but-bounded, in order; a bad record whose end cannot be
     * trusted ends the walk, and what follows it is unbounded damage. A version-1 document is one
     * record, bounded by the document. The bytes of a bounded bad record are not trusted, so its
     * header says only which queue and transaction it <i>probably</i> belonged to.
     */
    void walkPastDamage(byte[] doc, int n, DamageWalk walk) {
        if (!block) {
            walk.badBounded(firstRecord, n - firstRecord);
            return;
        }
        if (ByteBuffer.wrap(doc, 0, n).getInt(JournalBlockDescriptor.VERSION) != JournalBlockDescriptor.FORMAT_VERSION) {
            walk.unbounded(0);
            return;
        }
        ByteBuffer bb = ByteBuffer.wrap(doc, 0, n);
        int at = intactEnd;
        while (at < n) {
            if (checkRecord(doc, bb, at, n - at) == null) {
                int length = bb.getInt(at + LENGTH);
                walk.intact(at, length);
                at += length;
                continue;
            }
            int length = n - at >= HEADER_SIZE ? bb.getInt(at + LENGTH) : -1;
            boolean bounded = length >= HEADER_SIZE && length <= n - at
                    && (at + length == n || checkRecord(doc, bb, at + length, n - at - length) == null);
            if (!bounded) {
                walk.unbounded(at);
                return;
            }
            walk.badBounded(at, length);
            at += length;
        }
    }

    /** Receives the records {@link #walkPastDamage} finds, in document order. */
    interface DamageWalk {
        void intact(int at, int length);

        void badBounded(int at, int length);

        void unbounded(int at);
    }

    /** Offset of the first record in the document. */
    int firstRecord() {
        return firstRecord;
    }

    /** Offset just past the last intact record of the unbroken run from {@link #firstRecord()}. */
    int intactEnd() {
        return intactEnd;
    }

    int intactRecords() {
        return intactRecords;
    }

    /** @return null when the record at {@code at}, with {@code room} bytes left in the document, is intact */
    private String checkRecord(byte[] doc, ByteBuffer bb, int at, int room) {
        if (room < HEADER_SIZE) {
            return "record of " + room + " bytes is shorter than a header";
        }
        int length = bb.getInt(at + LENGTH);
        if (length < HEADER_SIZE || length > room) {
            return "record length " + length + " outside the " + room + " bytes left in the document";
        }
        crc.reset();
        crc.update(doc, at + 4, length - 4);
        if ((int) crc.getValue() != bb.getInt(at + CRC)) {
            return "CRC32C mismatch (" + typeName(doc[at + TYPE]) + " record of " + length + " bytes)";
        }
        if (doc[at + VERSION] != RECORD_VERSION && doc[at + VERSION] != RECORD_VERSION_2
                && doc[at + VERSION] != RECORD_VERSION_1) {
            return "unknown record layout version " + doc[at + VERSION];
        }
        return null;
    }
}
