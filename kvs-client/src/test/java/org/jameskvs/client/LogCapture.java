package org.jameskvs.client;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The log lines written while it is open, for a test that must see a line logged (the tests' SLF4J
 * binding, slf4j-simple, writes to {@code System.err} as it is at each write): {@code System.err}
 * is replaced by a tee that still prints everything and keeps a copy. Tests of this module run one
 * after the other in one JVM, so one capture at a time. Shared with other modules' tests (this
 * module's test-jar).
 */
public final class LogCapture implements AutoCloseable {
    private final PrintStream original = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    public LogCapture() {
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                original.write(b);
                synchronized (copy) {
                    copy.write(b);
                }
            }

            @Override
            public void write(byte[] b, int off, int len) {
                original.write(b, off, len);
                synchronized (copy) {
                    copy.write(b, off, len);
                }
            }

            @Override
            public void flush() {
                original.flush();
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    /** Every complete line captured so far. */
    public List<String> lines() {
        String all;
        synchronized (copy) {
            all = copy.toString(StandardCharsets.UTF_8);
        }
        List<String> out = new ArrayList<>(List.of(all.split("\\R", -1)));
        out.remove(out.size() - 1); // the unfinished last line (or the empty string after the last newline)
        return out;
    }

    /** The captured lines that match. */
    public List<String> lines(Predicate<String> what) {
        return lines().stream().filter(what).toList();
    }

    /** Waits (bounded by {@code maxMillis}, else fails) for a captured line that matches; returns it. */
    public String await(Predicate<String> what, long maxMillis, String description) throws InterruptedException {
        long deadline = System.nanoTime() + maxMillis * 1_000_000;
        while (true) {
            List<String> found = lines(what);
            if (!found.isEmpty()) {
                return found.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no log line '" + description + "' within " + maxMillis + " ms");
            }
            Thread.sleep(10);
        }
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
