package org.jameskvs.server.metrics;

/**
 * Requests and bytes of one block of pipelined requests, counted in plain fields and added to the
 * shared {@link ServerMetrics} counters once per block: each counter increment is an atomic add,
 * and a block holds hundreds of requests. Confined to the event loop, like the connection it counts.
 */
public final class BlockTally {
    private final int[] requestsByOpcode = new int[256];
    /** Opcodes seen in this block, so a flush touches only those. */
    private final byte[] seen = new byte[256];
    private int seenCount;
    private long bytesReceived;

    public void request(byte opcode, int frameBytes) {
        int i = opcode & 0xFF;
        if (requestsByOpcode[i]++ == 0) {
            seen[seenCount++] = opcode;
        }
        bytesReceived += frameBytes;
    }

    /** Adds this block's counts to the meters and starts the next block at zero. */
    public void flushTo(ServerMetrics metrics) {
        for (int k = 0; k < seenCount; k++) {
            int i = seen[k] & 0xFF;
            metrics.requests(seen[k], requestsByOpcode[i]);
            requestsByOpcode[i] = 0;
        }
        seenCount = 0;
        if (bytesReceived > 0) {
            metrics.bytesReceived(bytesReceived);
            bytesReceived = 0;
        }
    }
}
