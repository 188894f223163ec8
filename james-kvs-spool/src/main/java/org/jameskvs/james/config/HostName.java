package org.jameskvs.james.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The host name as a default James node id. Read from the environment and the kernel, never through
 * DNS ({@code InetAddress.getLocalHost()} resolves the name, and may wait on an unreachable resolver
 * at every start).
 */
final class HostName {
    static final String FALLBACK = "james";

    private HostName() {
    }

    /** The host name with every character outside {@code [A-Za-z0-9._-]} replaced by {@code -}. */
    static String asNodeId() {
        return Stream.of(Optional.ofNullable(System.getenv("HOSTNAME")), firstLine("/proc/sys/kernel/hostname"),
                firstLine("/etc/hostname"))
            .flatMap(Optional::stream)
            .map(String::trim)
            .filter(name -> !name.isEmpty())
            .findFirst()
            .map(HostName::sanitized)
            .orElse(FALLBACK);
    }

    static String sanitized(String name) {
        return name.replaceAll("[^A-Za-z0-9._-]", "-");
    }

    private static Optional<String> firstLine(String file) {
        try {
            return Files.readAllLines(Path.of(file), StandardCharsets.UTF_8).stream().findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
