package org.jameskvs.replication;

/** What a {@link NodeRequest} asks of one node; mirrors the wire opcodes the replication layer uses. */
public enum NodeOp {
    OPEN_WRITE, OPEN_READ, PUT, /** PUT that atomically replaces a live message with the same id */ PUT_REPLACING,
    DELETE, REPLACE, CLEAR, GET, READ, STAT, PING;

    public boolean isMutation() {
        return this == PUT || this == PUT_REPLACING || this == DELETE || this == REPLACE || this == CLEAR;
    }
}
