package org.jameskvs.replication;

import org.jameskvs.replication.ReplicationCore.Holder;
import org.jameskvs.replication.ReplicationCore.Peeked;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Reads of a queue's newest replication record from every reachable node, with read handles and
 * no fencing ({@link ReplicationCore#peekRecord}): what a lease watcher, a read-only reader and the
 * management table of an outsider need. State machine thread only.
 */
final class RecordPeeks {
    private final ReplicationCore core;
    private final List<Peek> inFlight = new ArrayList<>();

    RecordPeeks(ReplicationCore core) {
        this.core = core;
    }

    CompletableFuture<Peeked> peek(String queue) {
        CompletableFuture<Peeked> out = new CompletableFuture<>();
        List<String> nodes = new ArrayList<>();
        for (NodeHealth h : core.healths()) {
            if (h.up()) {
                nodes.add(h.node);
            }
        }
        if (nodes.isEmpty()) {
            out.complete(new Peeked(null, 0));
            return out;
        }
        Holder[] holders = new Holder[nodes.size()];
        Peek peek = new Peek(core.clock.nanoTime() + core.config.requestTimeout().toNanos(), out, new MembershipRecord[1],
                new int[1], holders);
        int[] left = {nodes.size()};
        Runnable one = () -> {
            if (--left[0] == 0 && !out.isDone()) {
                out.complete(peek.result());
            }
        };
        inFlight.add(peek);
        for (int i = 0; i < nodes.size(); i++) {
            String n = nodes.get(i);
            int slot = i;
            NodePath p = core.health(n).bestPath();
            NodeRequest open = NodeRequest.open(core.nextToken(), n, p, queue, false, 0, "");
            core.send(open, r -> {
                if (r.status() == org.jameskvs.protocol.Status.NO_SUCH_QUEUE) {
                    peek.answered()[0]++;
                }
                if (!r.isOk()) {
                    one.run();
                    return;
                }
                NodeRequest get = new NodeRequest(core.nextToken(), n, p, queue, NodeOp.GET, Ids.RECORD_ID, 0, 0, null, null,
                        0, 0, 0, 0, 0, null, true);
                core.send(get, g -> {
                    if (g.isOk() && g.get() != null && g.get().message() != null) {
                        peek.answered()[0]++;
                        MembershipRecord rec = MembershipRecord.decode(g.get().message().state());
                        if (rec != null && rec.newerThan(peek.best()[0])) {
                            peek.best()[0] = rec;
                        }
                        holders[slot] = new Holder(n, p, rec, r.txn(), r.epoch(), r.size(), r.damaged());
                    } else if (g.status() == org.jameskvs.protocol.Status.NOT_FOUND) {
                        peek.answered()[0]++;
                        holders[slot] = new Holder(n, p, null, r.txn(), r.epoch(), r.size(), r.damaged());
                    }
                    one.run();
                });
            });
        }
        return out;
    }

    private record Peek(long deadline, CompletableFuture<Peeked> future, MembershipRecord[] best, int[] answered,
                        Holder[] holders) {
        Peeked result() {
            List<Holder> found = new ArrayList<>();
            for (Holder h : holders) {
                if (h != null) {
                    found.add(h);
                }
            }
            return new Peeked(best[0], answered[0], List.copyOf(found));
        }
    }

    /** Completes the peeks past their deadline with what was found (silent nodes); forgets finished ones. */
    void expire(long now) {
        inFlight.removeIf(p -> {
            if (p.future().isDone()) {
                return true;
            }
            if (now > p.deadline()) {
                p.future().complete(p.result()); // silent nodes: what was found
                return true;
            }
            return false;
        });
    }
}
