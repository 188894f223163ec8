package org.jameskvs.replication;

/**
 * Synchronisation state of one copy (paper Table I). SYNC: holds every acknowledged mutation.
 * REBUILDING: receives new mutations while the old content is being copied in. NG: isolated; its
 * content is not trusted and is cleared before it is ever used again.
 */
public enum SyncState {
    SYNC, REBUILDING, NG
}
