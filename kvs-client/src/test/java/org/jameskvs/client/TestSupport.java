package org.jameskvs.client;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

final class TestSupport {
    private TestSupport() {
    }

    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(15, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("future did not complete normally", e);
        }
    }

    static void eventually(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not met within " + limit);
            }
            Thread.sleep(10);
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Work whose log lines a test reads. */
    interface LoggingWork {
        void run() throws Exception;
    }

    /**
     * What was logged while {@code work} ran. The tests' SLF4J binding (slf4j-simple) writes to
     * {@code System.err} as it is at each write, so it is swapped for a tee that still prints.
     */
    static String logWhile(LoggingWork work) throws Exception {
        PrintStream original = System.err;
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        PrintStream tee = new PrintStream(new java.io.OutputStream() {
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
        }, true, StandardCharsets.UTF_8);
        System.setErr(tee);
        try {
            work.run();
        } finally {
            System.setErr(original);
        }
        synchronized (copy) {
            return copy.toString(StandardCharsets.UTF_8);
        }
    }
}
