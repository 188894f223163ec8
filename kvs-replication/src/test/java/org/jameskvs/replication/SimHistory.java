package org.jameskvs.replication;

import org.jameskvs.client.Ack;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the writers of one simulation run issued and were told, and the checker over it: an ack
 * means two copies at that moment; no split brain (one writer); at the end, on the two in-sync
 * copies: no acknowledged mutation lost, no removed message back, states those of the last
 * acknowledged replace (or a later one that may have landed), and the messages in the order
 * their PUTs were issued (so FIFO within every priority), the same order on both copies.
 */
final class SimHistory {
    private static final long MS = SimCluster.MS;

    /** One mutation a writer issued, and its outcome once known. */
    static final class Issued {
        final String writer;
        final NodeOp kind;
        final String id;
        final String state;
        final long epoch;
        final long issueSeq;
        final long issuedAt;
        Ack outcome;

        Issued(String writer, NodeOp kind, String id, String state, long epoch, long issueSeq, long issuedAt) {
            this.writer = writer;
            this.kind = kind;
            this.id = id;
            this.state = state;
            this.epoch = epoch;
            this.issueSeq = issueSeq;
            this.issuedAt = issuedAt;
        }

        boolean acked() {
            return outcome != null && outcome.isOk();
        }

        boolean maybeApplied() {
            // Definite refusals that never reached a copy leave no trace; everything else may have.
            // DISK_FULL too: one copy's full store refused a PUT the other copy took; the writer undoes
            // it there, but a writer that stops first leaves it (as any failed PUT, see UncommittedPuts).
            return outcome == null || outcome.isOk() || outcome.status().isIndeterminate()
                    || outcome.status() == Status.INTERNAL_ERROR || outcome.status() == Status.STALE_EPOCH
                    || outcome.status() == Status.DISK_FULL;
        }
    }

    private final String queue;
    final List<Issued> issued = new ArrayList<>();
    final Map<String, List<Issued>> byId = new LinkedHashMap<>();
    /** Completed opens: {writerIndex, epoch, time}. */
    final List<long[]> opensDone = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    /**
     * Epochs lost with a disk: {epoch floor, time}. On two nodes, the node holding the whole copy went
     * down when the newest epoch was the floor; every ownership above it that began before the time
     * fenced only the other node, whose disk was lost at that time ({@link SimRun}).
     */
    final List<long[]> lostEpochs = new ArrayList<>();

    SimHistory(String queue) {
        this.queue = queue;
    }

    void track(Issued op) {
        issued.add(op);
        byId.computeIfAbsent(op.id, k -> new ArrayList<>()).add(op);
    }

    /** Ids whose PUT was acknowledged and no DELETE of them was. */
    List<String> live() {
        List<String> live = new ArrayList<>();
        for (Map.Entry<String, List<Issued>> e : byId.entrySet()) {
            if (e.getValue().get(0).acked() && e.getValue().stream().noneMatch(x -> x.kind == NodeOp.DELETE && x.acked())) {
                live.add(e.getKey());
            }
        }
        return live;
    }

    long acks() {
        return issued.stream().filter(Issued::acked).count();
    }

    /** At the moment of an ack: the effect is on two nodes (an ack means two copies). */
    void acked(Issued op, SimCluster c, QueueReplica via) {
        int copies = 0;
        StringBuilder where = new StringBuilder();
        for (SimNode s : c.world.servers.values()) {
            SimNode.Probe p = s.probe(queue, op.id);
            where.append(' ').append(s.name()).append('=').append(p == null ? "-" : p.present() ? "has" : "no");
            if (p == null) {
                continue;
            }
            if (op.kind == NodeOp.PUT && p.present() || op.kind == NodeOp.REPLACE && p.present()
                    || op.kind == NodeOp.DELETE && !p.present() && p.epoch() >> 20 >= op.epoch) {
                copies++;
            }
        }
        boolean laterMutation = byId.get(op.id).stream().anyMatch(x -> x.issueSeq > op.issueSeq && x.maybeApplied());
        // A late ack of a writer already superseded (its mutation was applied on two copies before
        // the fence) may find one copy being rebuilt by the new owner: the new owner's source holds
        // it, and the final check verifies it survives.
        boolean superseded = c.allCores.stream().map(k -> k.replica(queue))
                .anyMatch(x -> x != null && x != via && x.epoch() > via.epoch() && x.phase != QueueReplica.Phase.CLOSED);
        if (copies < 2 && !laterMutation && !superseded) {
            violations.add("ack with " + copies + " copy(ies): " + op.kind + " " + op.id + " by " + op.writer + " at "
                    + c.world.now / MS + " ms;" + where + " members " + via.members + " epoch " + via.epoch() + " phase "
                    + via.phase);
        }
    }

    /**
     * One writer: a mutation acknowledged to one writer, issued after another writer completed a
     * takeover at a higher epoch, is a split brain. With one exception: a takeover whose epoch went
     * with a disk ({@link #lostEpochs}) and that acknowledged nothing at it is no second writer. On
     * two nodes, a takeover made while one node was down fenced only the other, and when that node
     * then loses its disk the epoch goes with it; an open that hears only the node that was down takes
     * a lower epoch, which is the only one that can acknowledge from then on (the lost takeover's only
     * copy went with the disk; it reclaims and finds the new owner's lease). Ownerships are the opens
     * the run made and the reclaims a writer made by itself (seen by the epochs of its mutations).
     *
     * @param writerNames the writers' names, by the index {@link #opensDone} gives them
     * @return each lower epoch that acknowledged after a higher takeover lost with a disk that
     *     acknowledged nothing, with that takeover's epoch (so a run can count how often it met the case)
     */
    List<String> checkOneWriter(List<String> writerNames) {
        Set<String> belowSilentTakeover = new LinkedHashSet<>();
        Set<Long> ackedEpochs = new HashSet<>();
        for (Issued op : issued) {
            if (op.acked()) {
                ackedEpochs.add(op.epoch);
            }
        }
        // Ownerships: the opens the run made, and those a writer made by itself (a reclaim gives a new
        // epoch), from the first mutation issued at their epoch (they began no later).
        List<long[]> owners = new ArrayList<>(opensDone);
        Set<Long> known = new HashSet<>();
        opensDone.forEach(t -> known.add(t[1]));
        for (Issued op : issued) {
            if (known.add(op.epoch)) {
                owners.add(new long[]{writerNames.indexOf(op.writer), op.epoch, op.issuedAt});
            }
        }
        for (Issued op : issued) {
            if (!op.acked()) {
                continue;
            }
            for (long[] t : owners) {
                if (writerNames.get((int) t[0]).equals(op.writer) || t[1] <= op.epoch || t[2] >= op.issuedAt) {
                    continue;
                }
                long[] takeover = t;
                boolean lost = lostEpochs.stream().anyMatch(w -> takeover[1] > w[0] && takeover[2] <= w[1]);
                if (lost && !ackedEpochs.contains(t[1])) {
                    belowSilentTakeover.add(op.epoch + " below " + t[1]);
                } else {
                    violations.add("split brain: " + op.writer + " got an ack at epoch " + op.epoch + " for " + op.kind + " "
                            + op.id + " issued at " + op.issuedAt / MS + " ms, after writer " + t[0] + " took over at epoch "
                            + t[1] + " at " + t[2] / MS + " ms" + (lost ? " and acknowledged writes at that epoch" : ""));
                }
            }
        }
        return List.copyOf(belowSilentTakeover);
    }

    /** The final check, on the two in-sync copies {@code nodes} of the last owner. */
    void checkCopies(List<String> nodes, SimNode.QueueView a, SimNode.QueueView b) {
        List<String> orderA = userIds(a), orderB = userIds(b);
        Map<String, String> ca = content(a), cb = content(b);
        if (!ca.equals(cb)) {
            violations.add("copies differ: " + diff(ca, cb));
        } else if (!orderA.equals(orderB)) {
            violations.add("copies hold the messages in another order: " + nodes.get(0) + " " + orderA + ", "
                    + nodes.get(1) + " " + orderB);
        }
        for (Map.Entry<String, List<Issued>> e : byId.entrySet()) {
            List<Issued> ops = e.getValue();
            Issued put = ops.get(0);
            boolean deleteAcked = ops.stream().anyMatch(x -> x.kind == NodeOp.DELETE && x.acked());
            boolean deleteMaybe = ops.stream().anyMatch(x -> x.kind == NodeOp.DELETE && x.maybeApplied());
            for (SimNode.QueueView q : List.of(a, b)) {
                StoredMessage m = q.find(e.getKey());
                if (deleteAcked && m != null) {
                    violations.add("deleted message came back: " + e.getKey() + " on " + nodes);
                }
                if (put.acked() && !deleteMaybe && m == null) {
                    violations.add("acknowledged write lost: " + e.getKey() + " (missing on one of " + nodes + ")");
                }
                if (m != null && !put.maybeApplied()) {
                    violations.add("message present though its PUT was refused: " + e.getKey());
                }
                if (m != null) {
                    String st = new String(m.state(), StandardCharsets.UTF_8);
                    if (!possibleStates(ops).contains(st)) {
                        violations.add("stale state of " + e.getKey() + ": " + st + ", possible " + possibleStates(ops));
                    }
                }
            }
        }
        for (int i = 0; i < 2; i++) {
            checkFifo(nodes.get(i), i == 0 ? orderA : orderB);
        }
    }

    /** Messages in position order must be in the order their PUTs were issued (by epoch, then issue order). */
    private void checkFifo(String node, List<String> order) {
        Issued before = null;
        for (String id : order) {
            List<Issued> ops = byId.get(id);
            if (ops == null) {
                continue; // not ours (the check above reports it)
            }
            Issued put = ops.get(0);
            if (before != null && (put.epoch < before.epoch || put.epoch == before.epoch && put.issueSeq < before.issueSeq)) {
                violations.add("FIFO broken on " + node + ": " + id + " (issued #" + put.issueSeq + ") after " + before.id
                        + " (issued #" + before.issueSeq + ")");
                return;
            }
            before = put;
        }
    }

    /** The last acknowledged state (by epoch, then issue order) and any later one that may have been applied. */
    static List<String> possibleStates(List<Issued> ops) {
        List<Issued> writes = new ArrayList<>();
        for (Issued x : ops) {
            if (x.kind == NodeOp.PUT || x.kind == NodeOp.REPLACE) {
                writes.add(x);
            }
        }
        writes.sort((x, y) -> x.epoch != y.epoch ? Long.compare(x.epoch, y.epoch) : Long.compare(x.issueSeq, y.issueSeq));
        int lastAcked = 0;
        for (int i = 0; i < writes.size(); i++) {
            if (writes.get(i).acked()) {
                lastAcked = i;
            }
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < writes.size(); i++) {
            if (i == lastAcked || (i > lastAcked && writes.get(i).maybeApplied())) {
                out.add(writes.get(i).state);
            }
        }
        return out;
    }

    private static List<String> userIds(SimNode.QueueView q) {
        List<String> out = new ArrayList<>();
        for (StoredMessage m : q.messages()) {
            if (!Ids.isReserved(m.id())) {
                out.add(Ids.show(m.id()));
            }
        }
        return out;
    }

    private static Map<String, String> content(SimNode.QueueView q) {
        Map<String, String> out = new HashMap<>();
        for (StoredMessage m : q.messages()) {
            if (!Ids.isReserved(m.id())) {
                out.put(Ids.show(m.id()), new String(m.state(), StandardCharsets.UTF_8) + "|" + m.priority() + "|"
                        + new String(m.body(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static String diff(Map<String, String> a, Map<String, String> b) {
        List<String> d = new ArrayList<>();
        for (String k : a.keySet()) {
            if (!a.get(k).equals(b.get(k))) {
                d.add(k + ": " + a.get(k) + " vs " + b.get(k));
            }
        }
        for (String k : b.keySet()) {
            if (!a.containsKey(k)) {
                d.add(k + ": missing vs " + b.get(k));
            }
        }
        return d.size() > 10 ? d.subList(0, 10) + "... (" + d.size() + ")" : d.toString();
    }
}
