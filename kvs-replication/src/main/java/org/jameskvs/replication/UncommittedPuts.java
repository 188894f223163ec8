package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The writer's commit point for its own reads (issue 10 item 3, the writer's side): a message whose
 * PUT is not acknowledged (not yet on two copies) or failed (on one copy only, or outcome unknown)
 * is not shown to the writer's readers, so a mail whose intake PUT failed is never handed out
 * through this writer, also once a rebuild copied it to a second copy.
 *
 * <p>READ stops <i>before</i> the first message whose PUT is still in flight ({@code nextPosition}
 * is its position, so the reader reads it again once it is on two copies: nothing is skipped, nothing
 * handed out twice) and leaves out messages whose PUT failed (they are never to be delivered: the
 * cursor goes past them). GET answers NOT_FOUND for both. Kept by message id, which every copy shares,
 * whatever its positions. State machine thread only.
 *
 * <p><b>Undo.</b> The table is in memory: a new writer (restart, reclaim elsewhere, takeover) would
 * not know which PUTs failed. So a failed PUT that may be on a copy is undone on the copies: as soon
 * as the queue can write (two write members, checked every tick) the replica sends a DELETE of the
 * id ({@link ReplicaOp.Purpose#UNDO}), sequenced like any mutation (so a copy being rebuilt or
 * caught up gets it like the others); once both copies answered OK or NOT_FOUND the id leaves the
 * table. An undo is sent only while no client PUT of the id is in flight, and a later PUT is
 * ordered after it on both copies: it never deletes a later PUT, and a PUT that is acknowledged is
 * never undone. Left: a writer that stops (closed, fenced, crashed) before its undo is acknowledged
 * leaves the failed PUT on the copies that took it.
 */
final class UncommittedPuts {
    /** Client PUTs sent and not settled, per id. */
    private final Map<String, Integer> inFlight = new HashMap<>();
    /**
     * Ids whose latest PUT failed and that no later PUT or DELETE settled, with the number of that
     * failure (an undo sent for one failure does not settle a later one).
     */
    private final Map<String, Long> failed = new HashMap<>();
    /** Failed ids to undo (a DELETE through both copies), with their bytes, in failure order. */
    private final Map<String, byte[]> toUndo = new LinkedHashMap<>();
    /** Ids whose undo is in flight: at most one per id. */
    private final Set<String> undoing = new HashSet<>();
    private long failures;

    /** One undo to send: the id, and the failure it undoes. */
    record Undo(byte[] id, String key, long failure) { }

    /** A client PUT was sent to the copies: until its ack it is not committed. */
    void sent(ReplicaOp op) {
        String key = Ids.key(op.id);
        inFlight.merge(key, 1, Integer::sum);
        op.ack.whenComplete((a, e) -> settled(op, key, a == null ? Status.STORAGE_ERROR : a.status()));
    }

    private void settled(ReplicaOp op, String key, Status outcome) {
        inFlight.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
        if (outcome == Status.OK || (outcome == Status.DUPLICATE_ID && failed.containsKey(key))) {
            // Acknowledged; or a later PUT of a failed id found it on both copies (the failed PUT
            // is there, maybe copied by a rebuild) and its caller counts it as stored (a retry of
            // the same mail, the queue mover): it is committed now, undoing it would lose it.
            failed.remove(key);
            toUndo.remove(key);
        } else if (!appliedNowhere(op, outcome)) {
            failed.put(key, ++failures); // not replicated, or outcome unknown: it may be on one copy
            if (undoable(op)) {
                toUndo.put(key, op.id);
            } else {
                toUndo.remove(key);
            }
        }
    }

    /**
     * Whether a failed PUT may be undone by deleting its id: a plain PUT that no copy refused as a
     * duplicate. A copy answering DUPLICATE_ID held the id before (another PUT's message, maybe
     * acknowledged), and a replacing PUT may have replaced an acknowledged message: those ids stay
     * hidden from this writer only, as before.
     */
    private static boolean undoable(ReplicaOp op) {
        return op.kind == NodeOp.PUT && !op.effective.containsValue(Status.DUPLICATE_ID);
    }

    /**
     * A refusal both copies gave (the PUT took effect nowhere): a live message with the id, if any,
     * is another PUT's and stays visible. DISK_FULL counts when no copy applied the PUT (every copy's
     * store full; an undo would only spend their reserve); one copy's DISK_FULL while the other applied
     * it fails the PUT all the same (see {@code Answers}), and that PUT is to be undone.
     */
    private static boolean appliedNowhere(ReplicaOp op, Status s) {
        return s == Status.DUPLICATE_ID || s == Status.QUEUE_FULL || s == Status.BAD_REQUEST || s == Status.NOT_FOUND
                || s == Status.DISK_FULL && !op.effective.containsValue(Status.OK);
    }

    /** A client DELETE of the id was acknowledged: the message is gone from both copies. */
    void deleted(byte[] id) {
        failed.remove(Ids.key(id));
        toUndo.remove(Ids.key(id));
    }

    /** A client CLEAR was acknowledged. */
    void cleared() {
        failed.clear();
        toUndo.clear();
    }

    /**
     * Up to {@code max} undos to send now, each marked in flight: failed ids with no client PUT of
     * theirs in flight (that PUT's outcome decides: if it is acknowledged nothing is undone; an undo
     * sent later is ordered before any later PUT on both copies, so it never deletes one) and no
     * undo of theirs in flight.
     */
    List<Undo> undosDue(int max) {
        if (toUndo.isEmpty()) {
            return List.of();
        }
        List<Undo> due = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : toUndo.entrySet()) {
            if (due.size() >= max) {
                break;
            }
            String key = e.getKey();
            if (!inFlight.containsKey(key) && !undoing.contains(key) && failed.containsKey(key)) {
                due.add(new Undo(e.getValue(), key, failed.get(key)));
            }
        }
        for (Undo u : due) {
            undoing.add(u.key());
        }
        return due;
    }

    /**
     * The undo's DELETE settled: acknowledged (OK or NOT_FOUND on both copies), the failed PUT is on
     * no copy any more and the id is no longer hidden, unless a later PUT of it failed meanwhile
     * (then that one is undone in turn); otherwise it is sent again later.
     */
    void undone(Undo u, boolean acknowledged) {
        undoing.remove(u.key());
        Long current = failed.get(u.key());
        if (acknowledged && current != null && current == u.failure()) {
            failed.remove(u.key());
            toUndo.remove(u.key());
        }
    }

    /**
     * Whether this client PUT holds the queue's commit point ({@link CommitPoint}): it failed and its
     * id is still to be undone, so readers must not get past it before the undo removed it.
     */
    boolean holdsCommit(ReplicaOp op) {
        if (op.purpose != ReplicaOp.Purpose.CLIENT || op.kind != NodeOp.PUT || toUndo.isEmpty()) {
            return false;
        }
        Ack a = op.ack.getNow(null);
        return a != null && !a.isOk() && toUndo.containsKey(Ids.key(op.id));
    }

    /** For tests and the management view: failed PUTs not undone yet. */
    int undosPending() {
        return toUndo.size();
    }

    /** Whether a client mutation's ack tells this table something (a PUT or DELETE settled, a CLEAR). */
    void track(ReplicaOp op) {
        if (op.purpose != ReplicaOp.Purpose.CLIENT) {
            return;
        }
        switch (op.kind) {
            case PUT, PUT_REPLACING -> sent(op);
            case DELETE -> op.ack.thenAccept((Ack a) -> {
                if (a.isOk()) {
                    deleted(op.id);
                }
            });
            case CLEAR -> op.ack.thenAccept((Ack a) -> {
                if (a.isOk()) {
                    cleared();
                }
            });
            default -> { }
        }
    }

    boolean isEmpty() {
        return inFlight.isEmpty() && failed.isEmpty();
    }

    private boolean hidden(byte[] id) {
        String key = Ids.key(id);
        return inFlight.containsKey(key) || failed.containsKey(key);
    }

    /** The READ answer the writer's reader may see (see the class doc). */
    ReadResult filter(ReadResult rr) {
        if (!rr.isOk() || isEmpty()) {
            return rr;
        }
        List<StoredMessage> visible = new ArrayList<>(rr.messages().size());
        long next = rr.nextPosition();
        for (StoredMessage m : rr.messages()) {
            String key = Ids.key(m.id());
            if (inFlight.containsKey(key)) {
                next = m.position(); // read again from here once it is settled
                break;
            }
            if (!failed.containsKey(key)) {
                visible.add(m);
            }
        }
        if (visible.size() == rr.messages().size() && next == rr.nextPosition()) {
            return rr;
        }
        return new ReadResult(rr.status(), rr.reason(), rr.txn(), next, visible);
    }

    GetResult filter(byte[] id, GetResult g) {
        if (g.isOk() && id != null && hidden(id)) {
            return new GetResult(Status.NOT_FOUND, "its PUT is not on two copies", g.txn(), null);
        }
        return g;
    }
}
