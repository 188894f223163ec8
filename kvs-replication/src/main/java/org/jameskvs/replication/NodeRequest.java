package org.jameskvs.replication;

/**
 * A command of the state machine: send one request to one node on one path. The transport answers
 * it exactly once with a {@link NodeResponse} carrying the same token (a lost or late answer is the
 * state machine's business: it times requests out itself). Queue requests go to the handle of the
 * latest successful OPEN of that queue on that node and path ({@code OPEN_READ} handles are kept
 * apart from write handles).
 *
 * @param epoch   OPEN only: the wire epoch
 * @param owner   OPEN only: the owner name stored with the queue
 * @param fromPosition READ: the first position; REBASE: the seq (and {@code readyBefore} the digest)
 * @param viaReadHandle use the handle of the latest OPEN_READ instead of the write handle (probing)
 * @param queueSeq PUT, PUT_REPLACING, DELETE, REPLACE, CLEAR: the queue seq the writer gave the
 *                 mutation (sent with it, see the protocol's sequenced mutations); 0: none
 * @param position PUT, PUT_REPLACING: the position the message takes (a rebuild's copy of its
 *                 source's message; 0: the server's); REBASE: the source's next position (0: none)
 * @param committed a sequenced mutation: the writer's commit point sent with it (flag 0x0008, see
 *                 {@link CommitPoint}); -1: none
 * @param expectedStore OPEN only: the store expected to answer, 0 for any; a node whose store is
 *                 another (it lost its disk) refuses, STORE_CHANGED
 */
public record NodeRequest(long token, String node, NodePath path, String queue, NodeOp op,
                          byte[] id, int priority, long notBefore, byte[] state, byte[] body,
                          long fromPosition, int maxCount, int maxBytes, long readyBefore,
                          long epoch, String owner, boolean viaReadHandle, long queueSeq, long position,
                          long committed, long expectedStore) {

    public NodeRequest(long token, String node, NodePath path, String queue, NodeOp op,
                       byte[] id, int priority, long notBefore, byte[] state, byte[] body,
                       long fromPosition, int maxCount, int maxBytes, long readyBefore,
                       long epoch, String owner, boolean viaReadHandle, long queueSeq, long position,
                       long committed) {
        this(token, node, path, queue, op, id, priority, notBefore, state, body, fromPosition, maxCount, maxBytes,
                readyBefore, epoch, owner, viaReadHandle, queueSeq, position, committed, 0);
    }

    public NodeRequest(long token, String node, NodePath path, String queue, NodeOp op,
                       byte[] id, int priority, long notBefore, byte[] state, byte[] body,
                       long fromPosition, int maxCount, int maxBytes, long readyBefore,
                       long epoch, String owner, boolean viaReadHandle, long queueSeq, long position) {
        this(token, node, path, queue, op, id, priority, notBefore, state, body, fromPosition, maxCount, maxBytes,
                readyBefore, epoch, owner, viaReadHandle, queueSeq, position, -1);
    }

    public NodeRequest(long token, String node, NodePath path, String queue, NodeOp op,
                       byte[] id, int priority, long notBefore, byte[] state, byte[] body,
                       long fromPosition, int maxCount, int maxBytes, long readyBefore,
                       long epoch, String owner, boolean viaReadHandle, long queueSeq) {
        this(token, node, path, queue, op, id, priority, notBefore, state, body, fromPosition, maxCount, maxBytes,
                readyBefore, epoch, owner, viaReadHandle, queueSeq, 0);
    }

    public NodeRequest(long token, String node, NodePath path, String queue, NodeOp op,
                       byte[] id, int priority, long notBefore, byte[] state, byte[] body,
                       long fromPosition, int maxCount, int maxBytes, long readyBefore,
                       long epoch, String owner, boolean viaReadHandle) {
        this(token, node, path, queue, op, id, priority, notBefore, state, body, fromPosition, maxCount, maxBytes,
                readyBefore, epoch, owner, viaReadHandle, 0, 0);
    }

    static NodeRequest ping(long token, String node, NodePath path) {
        return new NodeRequest(token, node, path, null, NodeOp.PING, null, 0, 0, null, null, 0, 0, 0, 0, 0, null, false);
    }

    /** COMMIT on the copy's write handle: the writer's commit point (see {@link CommitPoint}). */
    static NodeRequest commit(long token, String node, NodePath path, String queue, long committed) {
        return new NodeRequest(token, node, path, queue, NodeOp.COMMIT, null, 0, 0, null, null, committed, 0, 0, 0, 0,
                null, false);
    }

    static NodeRequest open(long token, String node, NodePath path, String queue, boolean write, long epoch,
                            String owner) {
        return open(token, node, path, queue, write, epoch, owner, 0);
    }

    /** An OPEN only the store {@code expectedStore} may answer (0: any); another answers STORE_CHANGED. */
    static NodeRequest open(long token, String node, NodePath path, String queue, boolean write, long epoch,
                            String owner, long expectedStore) {
        return new NodeRequest(token, node, path, queue, write ? NodeOp.OPEN_WRITE : NodeOp.OPEN_READ, null, 0, 0,
                null, null, 0, 0, 0, 0, epoch, owner, false, 0, 0, -1, expectedStore);
    }

    @Override
    public String toString() {
        return "NodeRequest{" + token + " " + op + " " + node + "/" + path + " " + queue
                + (id == null ? "" : " id=" + Ids.show(id)) + (queueSeq > 0 ? " seq=" + queueSeq : "") + (op.name().startsWith("OPEN") ? " epoch=" + epoch : "") + "}";
    }
}
