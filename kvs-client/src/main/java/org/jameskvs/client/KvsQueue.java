package org.jameskvs.client;

import java.util.concurrent.CompletableFuture;

/**
 * An open queue on one server, bound to one {@link KvsClient} connection. Every call is
 * asynchronous and pipelined: many may be in flight; they are applied and answered in call order.
 * Futures complete with a status, never exceptionally (TIMEOUT and CONNECTION_LOST mean the outcome
 * is unknown). After a reconnect the client re-opens the queue with the same options before sending
 * anything else on it.
 */
public interface KvsQueue extends AutoCloseable {
    String name();

    /** Appends a message with a client-chosen id (1..255 bytes). {@link Ack#value()} is its position. */
    CompletableFuture<Ack> put(byte[] id, int priority, long notBefore, byte[] state, byte[] body);

    /**
     * Like {@link #put}, but a live message with the same id is replaced atomically (one journal
     * record on the server: after any crash the old or the new version is there, never neither).
     */
    default CompletableFuture<Ack> putReplacing(byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.UNKNOWN_OPCODE,
                getClass().getSimpleName() + " does not support putReplacing"));
    }

    CompletableFuture<Ack> delete(byte[] id);

    /** Rewrites the mutable part of a message (priority, notBefore, state) in place. */
    CompletableFuture<Ack> replace(byte[] id, int priority, long notBefore, byte[] state);

    CompletableFuture<GetResult> get(byte[] id);

    /**
     * Reads a block of live messages with {@code position >= fromPosition}, in order.
     * @param readyBefore 0 for no filter, else skip messages whose notBefore is later
     */
    CompletableFuture<ReadResult> read(long fromPosition, int maxCount, int maxBytes, long readyBefore);

    CompletableFuture<QueueStat> stat();

    CompletableFuture<Ack> clear();

    /**
     * A mutation sent with the queue seq its one writer gave it (see the protocol's package doc):
     * the server applies it only as the queue's next seq, answers a repeat with the stored outcome
     * (an idempotent retry) and refuses a gap with {@code SEQ_GAP}, whose {@link Ack#value()} is the
     * server's last seq. {@code kind} is PUT (with {@code replacing}: the replacing PUT), DELETE,
     * REPLACE or CLEAR; fields the kind does not use are ignored. Only a single server's queue has
     * it; others answer {@code UNKNOWN_OPCODE}.
     */
    default CompletableFuture<Ack> sequenced(long queueSeq, org.jameskvs.protocol.Opcode kind, boolean replacing,
                                             byte[] id, int priority, long notBefore, byte[] state, byte[] body) {
        return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.UNKNOWN_OPCODE,
                "sequenced mutations are for one server's copy of a queue"));
    }

    /**
     * {@link #sequenced} carrying the writer's commit point too ({@code committed >= 0}, flag 0x0008:
     * the highest seq the writer knows on both copies; read handles show nothing above it). A
     * negative {@code committed} sends the plain sequenced mutation.
     */
    default CompletableFuture<Ack> sequenced(long queueSeq, long committed, org.jameskvs.protocol.Opcode kind,
                                             boolean replacing, byte[] id, int priority, long notBefore, byte[] state,
                                             byte[] body) {
        return sequenced(queueSeq, kind, replacing, id, priority, notBefore, state, body);
    }

    /**
     * READ of this copy as it is, ignoring the queue's commit point (flag 0x0010): for operators and
     * tests inspecting one copy. A read handle otherwise shows nothing above the commit point.
     */
    default CompletableFuture<ReadResult> readUncommitted(long fromPosition, int maxCount, int maxBytes,
                                                          long readyBefore) {
        return read(fromPosition, maxCount, maxBytes, readyBefore);
    }

    /**
     * COMMIT: the writer's commit point, when no mutation carries it (see the protocol's package
     * doc). Only a single server's queue has it; others answer {@code UNKNOWN_OPCODE}.
     */
    default CompletableFuture<Ack> commit(long committed) {
        return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.UNKNOWN_OPCODE,
                "COMMIT is for one server's copy of a queue"));
    }

    /**
     * REBASE: this copy was rebuilt from another one and takes over that copy's last seq and digest
     * (see the protocol's package doc). Only a single server's queue has it; others answer
     * {@code UNKNOWN_OPCODE}.
     */
    default CompletableFuture<Ack> rebase(long lastSeq, long digest) {
        return rebase(lastSeq, digest, 0);
    }

    /**
     * REBASE with the source's next position too ({@code 0}: the copy keeps its own), so that both
     * copies give the next PUT the same position.
     */
    default CompletableFuture<Ack> rebase(long lastSeq, long digest, long nextPosition) {
        return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.UNKNOWN_OPCODE,
                "REBASE is for one server's copy of a queue"));
    }

    /**
     * Conditional REBASE: the copy takes {@code digest} only if it is at exactly ({@code lastSeq},
     * {@code expectedDigest}) (NOT_FOUND otherwise; OK when it already has {@code digest} at that seq).
     * Only a single server's queue has it; others answer {@code UNKNOWN_OPCODE}.
     */
    default CompletableFuture<Ack> rebaseIfAt(long lastSeq, long expectedDigest, long digest) {
        return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.UNKNOWN_OPCODE,
                "REBASE is for one server's copy of a queue"));
    }

    /**
     * PUT at a given position (&gt;= 1), unsequenced: a rebuild copying its source's message with
     * its position ({@code replacing}: the replacing PUT). Only a single server's queue has it;
     * others answer {@code UNKNOWN_OPCODE}.
     */
    default CompletableFuture<Ack> putAt(long position, boolean replacing, byte[] id, int priority, long notBefore,
                                         byte[] state, byte[] body) {
        return CompletableFuture.completedFuture(Ack.failed(org.jameskvs.protocol.Status.UNKNOWN_OPCODE,
                "a PUT at a given position is for one server's copy of a queue"));
    }

    CompletableFuture<Ack> drop();

    /** Releases the handle on the server (the queue and its messages stay). */
    @Override
    void close();
}
