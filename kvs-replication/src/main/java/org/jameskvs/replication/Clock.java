package org.jameskvs.replication;

/** Time as the state machine sees it: injected so that simulations run on virtual time. */
@FunctionalInterface
public interface Clock {
    /** Monotonic nanoseconds (any origin). */
    long nanoTime();

    Clock SYSTEM = System::nanoTime;
}
