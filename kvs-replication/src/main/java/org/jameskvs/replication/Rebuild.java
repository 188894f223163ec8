package org.jameskvs.replication;

import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Re-synchronisation of a copy (paper III.D "delete all data in this backup queue and
 * re-synchronize", IV.D block-wise recovery), while client traffic goes on.
 *
 * <p>The target is opened, CLEARed, given the record, and from that moment takes every new
 * mutation together with the source (it is a write member: acks still mean two copies). A STAT on
 * the source, sent in the source's request stream at that same moment, gives the <i>marker</i>: the
 * source's next position. Everything below the marker is copied in READ blocks of
 * {@code copyBlockMessages}; everything from the marker on reaches the target live. When the last
 * block is copied the target becomes SYNC.
 *
 * <p>Mutations during the copy: a DELETE of a message not yet copied answers NOT_FOUND on the
 * target (counted as success) and its id is remembered, so a block read before the delete does
 * not bring it back. A REPLACE is remembered likewise and its priority, notBefore and state are
 * used when the message is copied later, so no stale state survives. A CLEAR stops the copy. A copy
 * PUT sent before such a mutation reaches the target before it (one ordered connection), so the
 * mutation applies on top of the copy. A replacing PUT (same id) counts as a DELETE for the copy:
 * the target gets the new version live.
 *
 * <p><b>Ordering caveat:</b> messages put during the rebuild are appended to the target before the
 * older messages that are copied after them, so on the rebuilt copy positions (hence READ order)
 * are not FIFO between "old" and "new during rebuild" messages. Within each group the order is
 * kept. Consumers that need strict FIFO should not rely on positions across a rebuild.
 */
final class Rebuild {
    final QueueReplica replica;
    final Member source;
    final Member target;
    ReplicaOp recordOp;
    private long marker = -1;
    private long cursor;
    private boolean cleared;
    private boolean reading;
    private int outstanding;
    long copied;
    final long startedAt;
    private final Set<String> deleted = new HashSet<>();
    private final Map<String, ReplicaOp> replaced = new HashMap<>();
    /** Acks of REPLACEs of not-yet-copied messages, released when the copy completes. */
    final List<ReplicaOp> deferred = new ArrayList<>();

    Rebuild(QueueReplica replica, Member source, Member target) {
        this.replica = replica;
        this.source = source;
        this.target = target;
        this.startedAt = replica.core.clock.nanoTime();
    }

    void start() {
        ReplicaOp stat = new ReplicaOp(NodeOp.STAT, ReplicaOp.Purpose.MARKER, replica.core.clock.nanoTime());
        stat.rebuild = this;
        replica.sendTo(source, stat, false);
    }

    void noteClientMutation(ReplicaOp op) {
        switch (op.kind) {
            // A replacing PUT reaches the target live with the newest version: the copy must not
            // bring an older one (which the target would then refuse as a duplicate id).
            case DELETE, PUT_REPLACING -> {
                deleted.add(Ids.key(op.id));
                replaced.remove(Ids.key(op.id));
            }
            case REPLACE -> replaced.put(Ids.key(op.id), op);
            case CLEAR -> cleared = true;
            default -> { }
        }
    }

    void onMarker(NodeResponse r) {
        if (!r.isOk() || r.stat() == null) {
            replica.markNg(target, "cannot STAT the rebuild source: " + r.status());
            return;
        }
        marker = r.stat().nextPosition();
        next();
    }

    private void next() {
        if (replica.rebuild != this || reading || outstanding > 0) {
            return;
        }
        if (cleared || cursor >= marker) {
            replica.rebuildDone(this);
            return;
        }
        reading = true;
        ReplicaOp read = new ReplicaOp(NodeOp.READ, ReplicaOp.Purpose.COPY_READ, replica.core.clock.nanoTime());
        read.rebuild = this;
        read.fromPosition = cursor;
        read.maxCount = replica.core.config.copyBlockMessages();
        read.maxBytes = replica.core.config.copyBlockBytes();
        replica.sendTo(source, read, false);
    }

    void onBlock(NodeResponse r) {
        reading = false;
        if (!r.isOk() || r.read() == null) {
            replica.markNg(target, "cannot READ the rebuild source: " + r.status());
            return;
        }
        boolean end = r.read().messages().isEmpty();
        for (StoredMessage m : r.read().messages()) {
            if (m.position() >= marker) {
                end = true;
                break;
            }
            if (cleared || Ids.isReserved(m.id()) || deleted.contains(Ids.key(m.id()))) {
                continue;
            }
            ReplicaOp copy = new ReplicaOp(NodeOp.PUT, ReplicaOp.Purpose.COPY, replica.core.clock.nanoTime());
            copy.rebuild = this;
            copy.id = m.id();
            copy.body = m.body();
            ReplicaOp newer = replaced.get(Ids.key(m.id()));
            copy.priority = newer != null ? newer.priority : m.priority();
            copy.notBefore = newer != null ? newer.notBefore : m.notBefore();
            copy.state = newer != null ? newer.state : m.state();
            target.predictedTxn++;
            outstanding++;
            replica.sendTo(target, copy, false);
        }
        cursor = end ? marker : Math.max(cursor + 1, r.read().nextPosition());
        next();
    }

    void onCopied(Status effective) {
        outstanding--;
        if (effective != Status.OK) {
            replica.markNg(target, "copy refused: " + effective);
            return;
        }
        copied++;
        next();
    }

    /** The copy will not complete: deferred acks become "not replicated" (the outcome is unknown). */
    void abort(String why) {
        for (ReplicaOp op : deferred) {
            op.ack.complete(org.jameskvs.client.Ack.failed(Status.TIMEOUT, why + ": outcome unknown, not replicated"));
        }
        deferred.clear();
    }

    String progress() {
        return "rebuilding from " + source.node + ": " + copied + " copied, position " + cursor + "/" + marker;
    }
}
