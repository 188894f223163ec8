package org.jameskvs.protocol;

/**
 * Bits of the {@code u8 flags} that end the OK answers of OPEN and STAT (see the package doc). A
 * client that does not know the byte ignores it: it comes after every field older servers sent.
 */
public final class QueueFlags {
    /**
     * The server's copy of the queue is damaged: recovery found journal records of it lost, so it
     * may lack acknowledged messages or hold deleted ones. It stays set until CLEAR or DROP. A
     * replicating client treats such a copy as out of sync and rebuilds it from an intact copy.
     */
    public static final int DAMAGED = 0x01;

    private QueueFlags() {
    }
}
