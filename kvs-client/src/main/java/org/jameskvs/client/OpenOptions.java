package org.jameskvs.client;

import org.jameskvs.protocol.OpenMode;

/**
 * Parameters of an OPEN: mode, the writer's epoch, limits (0 = server default) and the owner name
 * (e.g. the James node id), as in the paper's "create queue" request; and the store the caller
 * expects to answer ({@code store}, 0 = any): a server that lost its disk since answers
 * {@code STORE_CHANGED} and creates or fences nothing. A handle re-opened after a reconnect expects
 * the store that answered its first OPEN when the client is configured so
 * ({@link KvsClientConfig.Builder#reopenOnSameStoreOnly}).
 */
public record OpenOptions(OpenMode mode, long epoch, long maxMessages, long maxBytes, String owner, long store) {
    public OpenOptions(OpenMode mode, long epoch, long maxMessages, long maxBytes, String owner) {
        this(mode, epoch, maxMessages, maxBytes, owner, 0);
    }

    public static OpenOptions writer(String owner, long epoch) {
        return new OpenOptions(OpenMode.WRITE, epoch, 0, 0, owner);
    }

    public static OpenOptions reader() {
        return new OpenOptions(OpenMode.READ, 0, 0, 0, "");
    }

    public OpenOptions withLimits(long maxMessages, long maxBytes) {
        return new OpenOptions(mode, epoch, maxMessages, maxBytes, owner, store);
    }

    /** Only the store {@code store} may answer (0: any). */
    public OpenOptions withStore(long store) {
        return new OpenOptions(mode, epoch, maxMessages, maxBytes, owner, store);
    }
}
