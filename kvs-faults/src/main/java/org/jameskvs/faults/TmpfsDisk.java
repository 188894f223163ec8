package org.jameskvs.faults;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A small file system of its own under a node's data directory (a {@code tmpfs} mount), so that a
 * test can fill the disk under a running server for real: a write past the end gets ENOSPC, a page of
 * a mapped journal file with no room behind it faults (SIGBUS), {@code statvfs} reports what is left.
 * The store's own limit ({@code journal.maxBytes}, the other full-disk tests) only imitates that.
 *
 * <p>{@link #fill} writes a ballast file ({@value #BALLAST}; the server only reads {@code *.cq4} and
 * its table files) until the given number of bytes is left, {@link #free} deletes it. Needs root and
 * {@code mount}; {@link #unavailableReason()} says why not.
 */
public final class TmpfsDisk implements AutoCloseable {
    static final String BALLAST = "ballast.fill";
    private static final int CHUNK = 1 << 20;

    private final Path mountPoint;

    private TmpfsDisk(Path mountPoint) {
        this.mountPoint = mountPoint;
    }

    /** Null if a tmpfs can be mounted here, else why not. */
    public static String unavailableReason() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "not root (user " + System.getProperty("user.name") + "): cannot mount a tmpfs";
        }
        try {
            Path probe = Files.createTempDirectory("kvs-tmpfs-probe");
            try {
                NetLab.Result r = NetLab.run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.toString());
                if (r.code() != 0) {
                    return "mount -t tmpfs failed: " + r.out().trim();
                }
                NetLab.run("umount", probe.toString());
            } finally {
                Files.deleteIfExists(probe);
            }
            return null;
        } catch (Exception e) {
            return "cannot run mount: " + e;
        }
    }

    /** Mounts a tmpfs of {@code bytes} at {@code dir} (created if missing; must be empty). */
    public static TmpfsDisk mount(Path dir, long bytes) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        NetLab.must("mount", "-t", "tmpfs", "-o", "size=" + bytes + ",mode=0755", "tmpfs", dir.toString());
        return new TmpfsDisk(dir);
    }

    /** Bytes an unprivileged writer could still write (what the server sees). */
    public long usableBytes() throws IOException {
        return Files.getFileStore(mountPoint).getUsableSpace();
    }

    /**
     * Writes ballast until at most {@code leaveBytes} are left (0: until the file system refuses the
     * next write). @return the bytes left
     */
    public long fill(long leaveBytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect(CHUNK);
        try (FileChannel ch = FileChannel.open(mountPoint.resolve(BALLAST), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            // Down to the last chunk in 1 MiB writes, then page by page: the server writes meanwhile.
            for (int size : new int[] {CHUNK, 4096}) {
                while (true) {
                    long left = usableBytes();
                    if (left <= leaveBytes) {
                        return left;
                    }
                    zeros.clear().limit((int) Math.min(size, left - leaveBytes));
                    try {
                        while (zeros.hasRemaining()) {
                            ch.write(zeros);
                        }
                    } catch (IOException full) { // ENOSPC: the server took the rest first, or this size does not fit
                        break;
                    }
                }
            }
        }
        return usableBytes();
    }

    /** Deletes the ballast: the room comes back at once. */
    public void free() throws IOException {
        Files.deleteIfExists(mountPoint.resolve(BALLAST));
    }

    /** Unmounts (lazily when still busy). */
    @Override
    public void close() throws IOException, InterruptedException {
        if (NetLab.run("umount", mountPoint.toString()).code() != 0) {
            NetLab.run("umount", "-l", mountPoint.toString());
        }
    }

    @Override
    public String toString() {
        return "tmpfs at " + mountPoint;
    }
}
