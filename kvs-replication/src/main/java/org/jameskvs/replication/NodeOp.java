package org.jameskvs.replication;

/** What a {@link NodeRequest} asks of one node; mirrors the wire opcodes the replication layer uses. */
public enum NodeOp {
    OPEN_WRITE, OPEN_READ, PUT, /** PUT that atomically replaces a live message with the same id */ PUT_REPLACING,
    DELETE, REPLACE, CLEAR, GET, READ, STAT, PING,
    /** end of a rebuild: the target takes over the source's seq and digest (fromPosition = seq, readyBefore = digest) */
    REBASE,
    /**
     * a conditional REBASE aligning a copy's digest with the other copy's (equal content, digests apart by
     * a full store's refusals): fromPosition = seq, position = the digest the copy must have, readyBefore = the new one
     */
    ALIGN,
    /** the writer's commit point, when no mutation carries it (fromPosition = the committed seq) */
    COMMIT,
    /** READ of a copy as it is, past the queue's commit point (an operator's export: every message a copy holds) */
    READ_UNCOMMITTED;

    public boolean isMutation() {
        return this == PUT || this == PUT_REPLACING || this == DELETE || this == REPLACE || this == CLEAR;
    }
}
