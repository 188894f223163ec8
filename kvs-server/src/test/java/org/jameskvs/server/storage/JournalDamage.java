package org.jameskvs.server.storage;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Finds and damages journal files the way disks and crashes do (for the fault-injection tests, and
 * through the test-jar for other modules' tests of damaged copies).
 */
public final class JournalDamage {
    private JournalDamage() {
    }

    /** The journal's Chronicle files in a store folder, oldest first. */
    public static List<Path> journalFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".cq4")).sorted().toList();
        }
    }

    /** File offset of the first occurrence of a marker. */
    public static long find(Path file, String marker) throws IOException {
        byte[] all = Files.readAllBytes(file);
        byte[] m = marker.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i <= all.length - m.length; i++) {
            for (int j = 0; j < m.length; j++) {
                if (all[i + j] != m[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("marker not found: " + marker);
    }

    /** File offset of the last occurrence of a marker. */
    public static long findLast(Path file, String marker) throws IOException {
        byte[] all = Files.readAllBytes(file);
        byte[] m = marker.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = all.length - m.length; i >= 0; i--) {
            for (int j = 0; j < m.length; j++) {
                if (all[i + j] != m[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("marker not found: " + marker);
    }

    /** Flips one bit of the byte at {@code offset}. */
    public static void flip(Path file, long offset) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(offset);
            int b = raf.read();
            raf.seek(offset);
            raf.write(b ^ 0x10);
        }
    }
}
