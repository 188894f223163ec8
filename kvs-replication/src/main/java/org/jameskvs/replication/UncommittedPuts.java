package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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
 */
final class UncommittedPuts {
    /** Client PUTs sent and not settled, per id. */
    private final Map<String, Integer> inFlight = new HashMap<>();
    /** Ids whose latest PUT failed and that no later PUT or DELETE settled. */
    private final Set<String> failed = new HashSet<>();

    /** A client PUT was sent to the copies: until its ack it is not committed. */
    void sent(ReplicaOp op) {
        String key = Ids.key(op.id);
        inFlight.merge(key, 1, Integer::sum);
        op.ack.whenComplete((a, e) -> settled(key, a == null ? Status.STORAGE_ERROR : a.status()));
    }

    private void settled(String key, Status outcome) {
        inFlight.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
        if (outcome == Status.OK) {
            failed.remove(key);
        } else if (!appliedNowhere(outcome)) {
            failed.add(key); // not replicated, or outcome unknown: it may be on one copy
        }
    }

    /**
     * A refusal both copies gave (the PUT took effect nowhere): a live message with the id, if any,
     * is another PUT's and stays visible.
     */
    private static boolean appliedNowhere(Status s) {
        return s == Status.DUPLICATE_ID || s == Status.QUEUE_FULL || s == Status.BAD_REQUEST || s == Status.NOT_FOUND;
    }

    /** A client DELETE of the id was acknowledged: the message is gone from both copies. */
    void deleted(byte[] id) {
        failed.remove(Ids.key(id));
    }

    /** A client CLEAR was acknowledged. */
    void cleared() {
        failed.clear();
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
        return inFlight.containsKey(key) || failed.contains(key);
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
            if (!failed.contains(key)) {
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
