package org.jameskvs.app.e2e;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for an event in the in-JVM lane tests (no James process to show the log of). */
final class Waits {
    private Waits() {
    }

    /** Returns once {@code condition} holds; fails naming {@code what} after {@code timeout}. */
    static void until(BooleanSupplier condition, String what, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + timeout + ": " + what);
            }
            Thread.sleep(20);
        }
    }
}
