package org.jameskvs.client;

import org.jameskvs.protocol.OpenMode;

/**
 * Parameters of an OPEN: mode, the writer's epoch, limits (0 = server default) and the owner name
 * (e.g. the James node id), as in the paper's "create queue" request.
 */
public record OpenOptions(OpenMode mode, long epoch, long maxMessages, long maxBytes, String owner) {
    public static OpenOptions writer(String owner, long epoch) {
        return new OpenOptions(OpenMode.WRITE, epoch, 0, 0, owner);
    }

    public static OpenOptions reader() {
        return new OpenOptions(OpenMode.READ, 0, 0, 0, "");
    }

    public OpenOptions withLimits(long maxMessages, long maxBytes) {
        return new OpenOptions(mode, epoch, maxMessages, maxBytes, owner);
    }
}
