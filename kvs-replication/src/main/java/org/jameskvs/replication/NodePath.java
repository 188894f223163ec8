package org.jameskvs.replication;

/** The two network paths to one KVS node (paper III.C: two connections in different segments). */
public enum NodePath {
    ACTIVE, STANDBY;

    public NodePath other() {
        return this == ACTIVE ? STANDBY : ACTIVE;
    }
}
