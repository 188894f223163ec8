package org.jameskvs.server.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * Which store this is: a random non-zero number drawn the first time a data directory is used, kept
 * in its file {@value #FILE_NAME} (16 hex digits), the same across restarts, a new one when the
 * server starts on a directory without it (a lost, wiped or replaced disk).
 *
 * <p>Why: a node that restarted with an empty disk answers like a node that never held a queue. A
 * writer that records the store ids of the nodes it heard (the replication's membership records)
 * can tell the two apart, and does not take the emptied node's "no copy here" for an answer about
 * the queue's history (see the replication's {@code OpenProcedure}).
 *
 * <p>The file is written before the journal is opened and the server answers anything: to a temporary
 * file, forced, renamed, and the directory forced, so after any crash the file is either absent or
 * whole. A file that cannot be read as an id (damaged) is replaced by a new id, with a WARN line:
 * the node then counts as one that lost its data, which is the cautious reading (a writer waits for
 * another copy instead of trusting this one's answers about the past).
 */
public final class StoreIdentity {
    private static final Logger LOG = LoggerFactory.getLogger(StoreIdentity.class);
    public static final String FILE_NAME = "store.id";

    private StoreIdentity() {
    }

    /** The directory's store id, drawn and written now if it has none (creating the directory). */
    public static long loadOrCreate(Path directory) throws IOException {
        Files.createDirectories(directory);
        Path file = directory.resolve(FILE_NAME);
        if (Files.exists(file)) {
            String text = Files.readString(file, StandardCharsets.US_ASCII).trim();
            try {
                long id = Long.parseUnsignedLong(text, 16);
                if (id != 0 && text.length() == 16) {
                    return id;
                }
            } catch (NumberFormatException e) {
                // fall through: replaced below
            }
            LOG.warn("{} does not hold a store id ('{}'): drawing a new one; writers will treat this node as one"
                    + " that lost its data", file, text.length() > 40 ? text.substring(0, 40) + "..." : text);
        }
        long id = draw();
        write(directory, file, id);
        LOG.info("New store {} in {}", hex(id), directory);
        return id;
    }

    /** The id as the file and the logs show it. */
    public static String hex(long id) {
        return String.format("%016x", id);
    }

    private static long draw() {
        SecureRandom random = new SecureRandom();
        long id;
        do {
            id = random.nextLong();
        } while (id == 0);
        return id;
    }

    private static void write(Path directory, Path file, long id) throws IOException {
        Path tmp = directory.resolve(FILE_NAME + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(java.nio.ByteBuffer.wrap((hex(id) + "\n").getBytes(StandardCharsets.US_ASCII)));
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException e) {
            // Some file systems cannot open a directory for sync; the rename is then as durable as they make it.
            LOG.debug("cannot sync directory {}: {}", directory, e.toString());
        }
    }
}
