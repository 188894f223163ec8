package org.jameskvs.james.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.Futures;
import org.jameskvs.james.queue.KvsMailQueueFactory.AdoptionTarget;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

/**
 * Moves the mail of one adopted KVS level queue (a lost node's) into the same level of this node's
 * queue of the same name, block by block: PUT every message of a block into the target (same id,
 * priority, {@code notBefore} and state bytes, the encoded mail unchanged: delays, retry counts and
 * attributes are kept), then DELETE the block from the source. A mail is deleted only once the target
 * acknowledged it, so a crash or a fence between the two leaves it in both queues: delivered twice at
 * most, never lost. A target that already holds the id ({@code DUPLICATE_ID}: a move interrupted
 * after its PUT) counts as stored.
 *
 * <p>Reads ask for every message, delayed or not ({@code readyBefore = 0}): delayed mail is moved with
 * its due time and the target's reader waits for it as for its own.
 */
final class QueueMover {
    /** How a {@link #moveBlock} ended. */
    enum Outcome { MOVED, EMPTY, STORE_BUSY, FENCED }

    private final KvsQueue source;
    private final AdoptionTarget target;
    private final int blockSize;
    private final int blockBytes;
    private final Duration timeout;
    private long position;
    private int positionSpace = -1;
    private long moved;
    /** Ids the target stored whose delete from the source has not succeeded yet. */
    private final List<byte[]> undeleted = new ArrayList<>();
    private String lastProblem = "";

    QueueMover(KvsQueue source, AdoptionTarget target, int blockSize, int blockBytes, Duration timeout) {
        this.source = source;
        this.target = target;
        this.blockSize = blockSize;
        this.blockBytes = blockBytes;
        this.timeout = timeout;
    }

    /** Moves one block; EMPTY once a read from the start found nothing left. */
    Outcome moveBlock() {
        Outcome pending = deleteMoved();
        if (pending != Outcome.MOVED) {
            return pending;
        }
        ReadResult read = Futures.await(source.read(position, blockSize, blockBytes, 0), timeout, "read " + source.name());
        if (!read.isOk()) {
            return problem(read.status(), "read " + source.name() + ": " + read.status() + " " + read.reason());
        }
        if (read.positionSpace() != positionSpace) {
            // Another copy serves reads now: its positions are its own, start over on it.
            boolean first = positionSpace == -1;
            positionSpace = read.positionSpace();
            if (!first && position != 0) {
                position = 0;
                return Outcome.MOVED;
            }
        }
        List<StoredMessage> messages = read.messages();
        if (messages.isEmpty()) {
            if (position == 0) {
                return Outcome.EMPTY;
            }
            position = 0; // one more pass from the start before calling the queue empty
            return Outcome.MOVED;
        }
        List<CompletableFuture<Ack>> puts = new ArrayList<>(messages.size());
        boolean delayed = false;
        long now = System.currentTimeMillis();
        for (StoredMessage m : messages) {
            puts.add(target.queue().put(m.id(), m.priority(), m.notBefore(), m.state(), m.body()));
            delayed |= m.notBefore() > now;
        }
        List<StoredMessage> stored = new ArrayList<>(messages.size());
        Outcome outcome = Outcome.MOVED;
        for (int i = 0; i < puts.size(); i++) {
            Ack ack = Futures.await(puts.get(i), timeout, "put into " + target.queue().name());
            if (ack.isOk() || ack.status() == Status.DUPLICATE_ID) {
                stored.add(messages.get(i));
            } else {
                outcome = problem(ack.status(), "put into " + target.queue().name() + ": " + ack.status() + " " + ack.reason());
            }
        }
        if (!stored.isEmpty()) {
            target.arrived().accept(delayed);
        }
        stored.forEach(m -> undeleted.add(m.id()));
        Outcome deleted = deleteMoved();
        if (deleted == Outcome.FENCED) {
            return deleted;
        }
        if (outcome == Outcome.MOVED) {
            position = Math.max(position, read.nextPosition());
        }
        return outcome == Outcome.MOVED ? deleted : outcome;
    }

    /**
     * Deletes from the source what the target already stored. One whose delete failed is retried here,
     * before anything is read again: read again, it would be put again, and be delivered twice if the
     * target had delivered it in between.
     */
    private Outcome deleteMoved() {
        if (undeleted.isEmpty()) {
            return Outcome.MOVED;
        }
        List<CompletableFuture<Ack>> deletes = new ArrayList<>(undeleted.size());
        for (byte[] id : undeleted) {
            deletes.add(source.delete(id));
        }
        List<byte[]> failed = new ArrayList<>();
        Outcome outcome = Outcome.MOVED;
        for (int i = 0; i < deletes.size(); i++) {
            Ack ack = Futures.await(deletes.get(i), timeout, "delete from " + source.name());
            if (ack.isOk() || ack.status() == Status.NOT_FOUND) {
                moved += ack.isOk() ? 1 : 0;
            } else {
                failed.add(undeleted.get(i));
                Outcome problem = problem(ack.status(), "delete from " + source.name() + ": " + ack.status() + " " + ack.reason());
                outcome = outcome == Outcome.FENCED ? outcome : problem;
            }
        }
        undeleted.clear();
        undeleted.addAll(failed);
        return outcome;
    }

    private Outcome problem(Status status, String what) {
        lastProblem = what;
        return Fencing.showsAnotherWriter(status) ? Outcome.FENCED : Outcome.STORE_BUSY;
    }

    String sourceName() {
        return source.name();
    }

    /** Mails moved (deleted from the source after the target stored them) since adoption. */
    long moved() {
        return moved;
    }

    String lastProblem() {
        return lastProblem;
    }

    void close() {
        source.close();
    }
}
