package org.jameskvs.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The JVM flags Chronicle Queue needs (module exports and opens, analytics off), for launchers that
 * start the server from a class path ({@code java <FLAGS> -cp ... org.jameskvs.server.KvsServerMain}:
 * {@link KvsServerProcess}). {@code java -jar kvs-server.jar} needs none: its manifest carries them. The list is the parent pom's
 * {@code chronicle.jvm.flags}, which the build writes into {@code chronicle-jvm-flags.txt} next to this
 * class, so that it is written down once.
 */
public final class ChronicleJvmFlags {
    private static final String RESOURCE = "chronicle-jvm-flags.txt";

    /** The flags, one element each. */
    public static final List<String> FLAGS = load();

    private ChronicleJvmFlags() {
    }

    private static List<String> load() {
        try (InputStream in = ChronicleJvmFlags.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the class path next to " + ChronicleJvmFlags.class.getName());
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            if (text.isEmpty() || text.contains("${")) {
                throw new IllegalStateException(RESOURCE + " was not filled in by the Maven build (resource filtering): '" + text + "'");
            }
            return List.of(text.split("\\s+"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
