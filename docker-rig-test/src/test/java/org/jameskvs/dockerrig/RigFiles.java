package org.jameskvs.dockerrig;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/** Paths of the rig and small helpers shared by the tests. */
final class RigFiles {
    private RigFiles() {
    }

    /** The repository root (system property {@code rig.root}, set by the module's pom). */
    static Path root() {
        String root = System.getProperty("rig.root");
        Path path = root != null ? Path.of(root) : Path.of("..");
        Path normalized = path.toAbsolutePath().normalize();
        if (!Files.isRegularFile(normalized.resolve("docker/docker-compose.yml"))) {
            throw new IllegalStateException("no docker/docker-compose.yml under " + normalized + " (rig.root)");
        }
        return normalized;
    }

    static Path composeFile() {
        return root().resolve("docker/docker-compose.yml");
    }

    /** Parses YAML (anchors and merge keys included). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> yaml(String text) {
        Object parsed = new Yaml(new LoaderOptions()).load(text);
        if (!(parsed instanceof Map)) {
            throw new IllegalArgumentException("not a YAML mapping");
        }
        return (Map<String, Object>) parsed;
    }

    static Map<String, Object> yaml(Path file) {
        try {
            return yaml(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(file + " does not parse as YAML: " + e.getMessage(), e);
        }
    }

    /** The executable's path if it is on PATH. */
    static Path onPath(String executable) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, executable);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** Result of a finished command: exit code and merged stdout+stderr. */
    record Run(int exitCode, String output) {
    }

    /** Runs a command in {@code directory} (bounded by {@code timeout}), stdout and stderr merged. */
    static Run run(Path directory, Map<String, String> env, Duration timeout, String... command) {
        try {
            ProcessBuilder builder = new ProcessBuilder(List.of(command)).directory(directory.toFile())
                .redirectErrorStream(true);
            builder.environment().putAll(env);
            Path output = Files.createTempFile("rig-command", ".log");
            builder.redirectOutput(output.toFile());
            Process process = builder.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout
                    + ":\n" + Files.readString(output, StandardCharsets.UTF_8));
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            Files.deleteIfExists(output);
            return new Run(process.exitValue(), text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sources of the COPY/ADD instructions of a Dockerfile (not multi-stage --from copies). */
    static List<String> copySources(Path dockerfile) throws IOException {
        List<String> sources = new ArrayList<>();
        // Join continuation lines first.
        String text = Files.readString(dockerfile).replaceAll("\\\\\\r?\\n", " ");
        for (String line : text.split("\\r?\\n")) {
            String trimmed = line.trim();
            String upper = trimmed.toUpperCase();
            if (!(upper.startsWith("COPY ") || upper.startsWith("ADD ")) || upper.contains("--FROM=")) {
                continue;
            }
            List<String> words = new ArrayList<>(List.of(trimmed.split("\\s+")));
            words.remove(0);
            words.removeIf(w -> w.startsWith("--"));
            if (words.size() >= 2) {
                sources.addAll(words.subList(0, words.size() - 1));
            }
        }
        return sources;
    }
}
