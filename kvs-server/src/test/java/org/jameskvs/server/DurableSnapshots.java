package org.jameskvs.server;

import org.jameskvs.server.storage.FsyncObserver;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What a power cut would leave of a journal: at every fsync the server makes (inside it, with the
 * writer stopped, see {@link FsyncObserver}) the journal directory is copied to
 * {@code <root>/snap-<n>}, the newest complete copy replacing the one before. A power cut at any
 * moment leaves exactly the newest complete copy: what was durable at the last fsync that returned.
 *
 * <p>Cheap enough to run at every fsync of a small load: of each journal file only the bytes up to
 * its last record (plus a margin for Chronicle's own trailing metadata) are copied; the copy is then
 * extended, sparse, to the file's length, as Chronicle preallocates. A copy is written under
 * {@code tmp-<n>} and renamed when complete, so a kill during a copy leaves the previous one.
 *
 * <p>Each fsync also appends {@code <n> <System.nanoTime()>} to {@code <root>/fsync-times}, the time
 * taken as the observer is called, before the copy: the server's single store thread has
 * been in that fsync since before it, so it sent no answer in between; an answer a client
 * received before that time was committed before the fsync began, and is in snapshot {@code n}.
 * (System.nanoTime is CLOCK_MONOTONIC on Linux, one clock for every process of the machine; the
 * copies need GNU cp anyway.)
 */
final class DurableSnapshots implements FsyncObserver {
    /** Past the last record: room for an index array or header Chronicle wrote after it. */
    private static final long MARGIN = 256 << 10;
    private static final String TIMES = "fsync-times";
    private final Path root;
    private long taken;

    public DurableSnapshots(Path root) {
        this.root = root;
    }

    @Override
    public void fsynced(Path directory, Map<Path, Long> dataEnds) {
        long at = System.nanoTime();
        try {
            long n = ++taken;
            Path tmp = root.resolve("tmp-" + n);
            Files.createDirectories(tmp);
            Files.writeString(root.resolve(TIMES), n + " " + at + "\n", StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            try (Stream<Path> files = Files.list(directory)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    Long end = dataEnds.get(f);
                    copy(f, tmp.resolve(f.getFileName()), end == null ? Long.MAX_VALUE : end + MARGIN);
                }
            }
            Path snap = root.resolve(String.format("snap-%012d", n));
            Files.move(tmp, snap, StandardCopyOption.ATOMIC_MOVE);
            Path previous = root.resolve(String.format("snap-%012d", n - 1));
            if (Files.exists(previous)) {
                deleteTree(previous);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("power-cut snapshot failed", e);
        }
    }

    /** The newest complete snapshot under {@code root}, if any. */
    public static Optional<Path> newest(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(p -> p.getFileName().toString().startsWith("snap-")).max(Path::compareTo);
        }
    }

    /** How many fsyncs a snapshot root saw (the number of its newest snapshot). */
    public static long fsyncs(Path root) throws IOException {
        return newest(root).map(p -> Long.parseLong(p.getFileName().toString().substring(5))).orElse(0L);
    }

    /** When fsync {@code n} under {@code root} began ({@link System#nanoTime()} of the server), if it did. */
    public static java.util.OptionalLong fsyncNanos(Path root, long n) throws IOException {
        Path times = root.resolve(TIMES);
        if (n <= 0 || !Files.exists(times)) {
            return java.util.OptionalLong.empty();
        }
        String prefix = n + " ";
        try (Stream<String> lines = Files.lines(times)) {
            return lines.filter(l -> l.startsWith(prefix)).mapToLong(l -> Long.parseLong(l.substring(prefix.length())))
                    .findFirst();
        }
    }

    /**
     * Copies the files of a directory that nothing writes to meanwhile, keeping them sparse (a
     * journal file is mostly preallocated zeros): GNU cp skips the holes without reading them.
     */
    static void copySparse(Path from, Path to) throws IOException, InterruptedException {
        Files.createDirectories(to);
        List<String> cmd = new java.util.ArrayList<>(List.of("cp", "--sparse=always"));
        try (Stream<Path> files = Files.list(from)) {
            files.filter(Files::isRegularFile).forEach(f -> cmd.add(f.toString()));
        }
        if (cmd.size() == 2) {
            return;
        }
        cmd.add(to.toString());
        Process cp = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(cp.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!cp.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) || cp.exitValue() != 0) {
            throw new IOException("cp failed: " + out);
        }
    }

    private static void copy(Path from, Path to, long upTo) throws IOException {
        try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long size = in.size();
            long n = Math.min(size, upTo);
            for (long at = 0; at < n; ) {
                at += in.transferTo(at, n - at, out);
            }
        }
        long size = Files.size(from);
        if (Files.size(to) < size) {
            try (RandomAccessFile raf = new RandomAccessFile(to.toFile(), "rw")) {
                raf.setLength(size);
            }
        }
    }

    static void deleteTree(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            List<Path> all = s.sorted(java.util.Comparator.reverseOrder()).toList();
            for (Path x : all) {
                Files.deleteIfExists(x);
            }
        }
    }
}
