package org.jameskvs.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The machine's 1-minute load average (Linux), recorded with every figure: on a shared machine it says what else ran. */
final class LoadAverage {
    private LoadAverage() {
    }

    static String oneMinute() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }
}
