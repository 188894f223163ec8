package org.jameskvs.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ChildProcessTest {

    @Test
    void relativeClassPathEntriesBecomeAbsoluteSoAChildInAnotherDirectoryFindsThem() {
        String relative = String.join(File.pathSeparator, "target/benchmarks.jar", "lib/*", "/opt/a.jar", "");

        String absolute = ChildProcess.absoluteClassPath(relative);

        assertThat(absolute.split(File.pathSeparator)).containsExactly(
            Path.of("target/benchmarks.jar").toAbsolutePath().toString(),
            Path.of("lib").toAbsolutePath() + File.separator + "*",
            "/opt/a.jar");
    }

    @Test
    void thisJvmsClassPathIsHandedOnAbsolute() {
        assertThat(ChildProcess.classPath().split(File.pathSeparator))
            .isNotEmpty()
            .allSatisfy(entry -> assertThat(Path.of(entry.replace("*", "")).isAbsolute()).as(entry).isTrue());
    }
}
