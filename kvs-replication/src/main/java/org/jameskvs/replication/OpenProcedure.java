package org.jameskvs.replication;

import org.jameskvs.client.OpenOptions;
import org.jameskvs.protocol.Status;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.jameskvs.replication.OpenProbe.identity;
import static org.jameskvs.replication.OpenProbe.nodes;
import static org.jameskvs.replication.OpenProbe.sameContent;
import static org.jameskvs.replication.OpenProbe.size;

/**
 * Opening a replicated queue: also how a restarted owner reclaims it and another James node takes
 * it over (they differ only in the ownership check).
 * <ol>
 * <li><b>Probe</b>: OPEN read + STAT on every node of the group: who has a copy, at which epoch,
 * owned by whom. At least {@code groupSize - 1} nodes must answer: the current members are two
 * nodes, so with at most one node silent at least one current member is heard.</li>
 * <li><b>Fence</b>: the new epoch is one above the highest seen (the caller's epoch if higher);
 * OPEN write at that epoch on every node that answered (see {@link Epochs} for the layout). From then on the previous owner's
 * mutations are refused (STALE_EPOCH) on those copies, and since any of its later acks would need
 * one of them (every membership change keeps a survivor), it can ack nothing more.</li>
 * <li><b>Read the records</b> ({@link MembershipRecord}) on the fenced copies; they can no longer
 * change. The highest version names the members. If both are SYNC, hold that version and are
 * <b>equal by content</b>, i.e. their (epoch, last seq, digest) are equal (the fence OPEN's answer;
 * see the protocol's package doc), both stay SYNC; otherwise the copy that holds the newest record,
 * then the one that applied more mutations, is the source and the other one is rebuilt (in the
 * background; the queue is usable as soon as the new record is on both write members). Transaction
 * numbers and sizes no longer decide: a copy that lost a record in an older journal file keeps
 * its counts but not its digest.</li>
 * <li><b>Fence again</b>, once, when a node the newest record names lost its disk since
 * ({@link HeardNodes#lostDiskSince}): a takeover while the other node of a two-node group was down
 * fenced only that node, so its epoch went with the disk and "one above the highest seen" may be
 * below a writer still running. The open fences every node again at {@link Epochs#LOST_DISK_MARGIN}
 * above the newest record's epoch (unless it chose that high already) and reads the records again.</li>
 * </ol>
 * A copy whose server flags it DAMAGED (journal records of it lost at recovery: it may lack
 * acknowledged messages or hold deleted ones, with a transaction number that still looks right) is
 * never the source while an intact in-sync copy answered: it is rebuilt from that one (the rebuild's
 * CLEAR ends the mark). When every in-sync copy that answered is damaged, the open waits (TIMEOUT)
 * for a named in-sync copy that did not answer; when there is none, the damaged copy serves, with
 * an ALARM event naming the queue.
 * What the probe learnt of each node, and how two copies are compared: {@link OpenProbe}.
 */
final class OpenProcedure {
    private final QueueReplica r;
    private final OpenOptions options;
    private final boolean force;
    private int step;
    private long deadline;
    private int outstanding;
    private long epoch;
    private final Map<String, OpenProbe> probes = new LinkedHashMap<>();
    /** The probe found no trace of an earlier open of the queue (see {@link HeardNodes#looksNeverOpened}). */
    private boolean freshProbe;
    /** The highest wire epoch of this process's own earlier failed creations the probe found (-1: none): {@link #afterProbe}. */
    private long ownTraceWire = -1;
    /**
     * Fences sent so far: 1, or 2 once this open fenced again above the epochs a lost disk took with
     * it ({@link HeardNodes#lostDiskSince}). An answer counts only for its own round.
     */
    private int fenceRounds;

    OpenProcedure(QueueReplica r, OpenOptions options, boolean force) {
        this.r = r;
        this.options = options;
        this.force = force;
    }

    void start() {
        step = 1;
        deadline = r.core.clock.nanoTime() + r.core.config.requestTimeout().toNanos();
        for (String n : r.core.placement.group()) {
            NodeHealth h = r.core.health(n);
            if (!h.up()) {
                continue;
            }
            NodePath path = h.bestPath();
            outstanding++;
            NodeRequest open = NodeRequest.open(r.core.nextToken(), n, path, r.name, false, 0, "");
            r.core.send(open, resp -> {
                if (step != 1) {
                    return;
                }
                if (resp.status() == Status.NO_SUCH_QUEUE) {
                    probes.put(n, new OpenProbe(n));
                    done(1);
                } else if (resp.isOk()) {
                    NodeRequest stat = new NodeRequest(r.core.nextToken(), n, path, r.name, NodeOp.STAT, null, 0, 0,
                            null, null, 0, 0, 0, 0, 0, null, true);
                    r.core.send(stat, st -> {
                        if (step != 1) {
                            return;
                        }
                        if (st.isOk() && st.stat() != null) {
                            OpenProbe p = new OpenProbe(n);
                            p.path = path;
                            p.hasCopy = true;
                            p.store = resp.store(); // the fence expects it: a wipe in between refuses
                            p.epoch = st.stat().epoch();
                            p.owner = st.stat().owner() == null ? "" : st.stat().owner();
                            p.size = st.stat().size();
                            probes.put(n, p);
                        }
                        done(1);
                    });
                } else {
                    done(1);
                }
            });
        }
        if (outstanding == 0) {
            advance();
        }
    }

    private void done(int forStep) {
        if (step == forStep && --outstanding == 0) {
            advance();
        }
    }

    void tick(long now) {
        if (now > deadline) {
            outstanding = 0;
            advance();
        }
    }

    private void advance() {
        int s = step;
        step = -1; // late answers of the finished step are ignored
        switch (s) {
            case 1 -> afterProbe();
            case 2 -> afterFence();
            case 3 -> afterRecords();
            default -> { }
        }
    }

    private void afterProbe() {
        int groupSize = r.core.placement.group().size();
        if (probes.size() < groupSize - 1) {
            r.failOpen(Status.TIMEOUT, "only " + probes.size() + " of " + groupSize
                    + " nodes answered; at least " + (groupSize - 1) + " are needed to find the current copies");
            return;
        }
        List<OpenProbe> copies = probes.values().stream().filter(p -> p.hasCopy).toList();
        java.util.Set<Long> ownTraces = r.core.freshFences.getOrDefault(r.name, java.util.Set.of());
        long maxEpoch = -1;
        long ownTraceEpoch = -1;
        ownTraceWire = -1;
        for (OpenProbe p : copies) {
            if (!force && !p.owner.isEmpty() && !p.owner.equals(r.owner)) {
                r.failOpen(Status.QUEUE_LOCKED, "owned by " + p.owner + " on " + p.node
                        + " (take it over explicitly, or after its lease expired)");
                return;
            }
            long counter = Epochs.counter(Epochs.fencingOf(p.epoch));
            if (p.size == 0 && ownTraces.contains(Epochs.fencingOf(p.epoch))) {
                // The empty queue an earlier attempt of this process left when it fenced and then
                // failed to create the queue (a node that answered the probe but not the fence, say):
                // fenced again at its own epoch, not above it, so that retries do not climb (see
                // the check below for why a climbing trace can fence a queue's real owner).
                ownTraceEpoch = Math.max(ownTraceEpoch, counter);
                ownTraceWire = Math.max(ownTraceWire, p.epoch);
                continue;
            }
            maxEpoch = Math.max(maxEpoch, counter);
        }
        // The writer's epoch counter, one above anything seen; the process id in the low bits
        // keeps two writers that chose the same counter (a restarted owner and its paused former
        // self) strictly ordered, so neither can overtake the other by bumping its generation.
        freshProbe = HeardNodes.looksNeverOpened(r, probes.values());
        if (probes.size() < groupSize && probes.values().stream().allMatch(p -> p.size == 0)) {
            // No record on the nodes heard (each queue there is empty) and not every node heard:
            // what the records step would conclude (HeardNodes.newQueueWithNodeDown) is known now.
            // An open that can only fail fails before it fences: its fence would leave a trace at
            // its epoch on each node heard, one epoch higher at each retry (James retries at every
            // enqueue), and on a node that lost its disk that could pass the epoch of the queue's
            // real owner, whose rebuild of its copy there would then be refused and fence it.
            String why = HeardNodes.whyNotNew(r, probes.values(), freshProbe);
            if (why != null) {
                r.failOpen(Status.TIMEOUT, "no record of " + r.name + " on " + probes.size() + " of " + groupSize
                        + " nodes; " + why);
                return;
            }
        }
        fenceAt(Math.max(Math.max(options.epoch(), maxEpoch + 1), ownTraceEpoch));
    }

    /** Step 2: OPEN write at this counter's epoch on every node the probe heard. */
    private void fenceAt(long counter) {
        if (counter > Epochs.MAX_COUNTER) {
            r.failOpen(Status.BAD_REQUEST, "epoch " + counter + " is beyond the highest writer epoch " + Epochs.MAX_COUNTER);
            return;
        }
        epoch = Epochs.fencing(counter, r.core.processId);
        r.newFencingEpoch(epoch);
        if (ownTraceWire >= 0 && Epochs.fencingOf(ownTraceWire) == epoch) {
            // fencing an own trace again: its OPEN carried a generation of this epoch already
            r.skipGenerationsTo(ownTraceWire & Epochs.MAX_GEN);
        }
        fenceRounds++;
        if (freshProbe) {
            r.core.freshFences.computeIfAbsent(r.name, k -> new java.util.HashSet<>()).add(epoch);
        }
        // Fence every node that answered, with or without a copy: "no copy" was true at probe
        // time only, and the previous owner may create one there (a rebuild target) afterwards.
        // Opening it in write mode at the new epoch creates an empty queue that refuses the old
        // owner from then on, and makes the "no record there" answer below final.
        List<OpenProbe> toFence = new ArrayList<>(probes.values());
        step = 2;
        deadline = r.core.clock.nanoTime() + r.core.config.requestTimeout().toNanos();
        outstanding = toFence.size();
        for (OpenProbe p : toFence) {
            if (p.path == null) {
                p.path = r.core.health(p.node).bestPath();
            }
            p.fenced = false;
            p.lostDiskAtFence = false;
            p.recordRead = false;
            p.record = null;
            p.wire = r.wireEpoch();
            // The store the probe saw, if it saw a copy: a node wiped since refuses (STORE_CHANGED),
            // stays unfenced, and the open tries again rather than fencing an emptied store.
            NodeRequest open = NodeRequest.open(r.core.nextToken(), p.node, p.path, r.name, true, p.wire, r.owner, p.store);
            int round = fenceRounds;
            r.core.send(open, resp -> {
                if (step != 2 || round != fenceRounds) {
                    return; // a late answer of a finished step, or of the fence before a raise
                }
                if (resp.status() == Status.STALE_EPOCH) {
                    step = -1;
                    r.failOpen(Status.STALE_EPOCH, "a newer epoch owns " + r.name + " on " + p.node);
                    return;
                }
                if (resp.status() == Status.STORE_CHANGED) {
                    p.lostDiskAtFence = true;
                    r.event(p.node + " lost its disk since the probe; not fenced (" + resp.reason() + ")");
                }
                if (resp.isOk()) {
                    p.fenced = true;
                    p.fenceTxn = resp.txn();
                    p.size = resp.size();
                    p.damaged = resp.damaged();
                    p.lastSeq = resp.lastSeq();
                    p.digest = resp.digest();
                    p.store = resp.store();
                    if (p.store != 0) {
                        r.stores.put(p.node, p.store);
                    }
                }
                done(2);
            });
        }
    }

    private void afterFence() {
        List<OpenProbe> fenced = probes.values().stream().filter(p -> p.fenced).toList();
        int groupSize = r.core.placement.group().size();
        if (fenced.size() < groupSize - 1) {
            r.failOpen(Status.TIMEOUT, "fenced only " + fenced.size() + " of " + groupSize + " nodes; try again");
            return;
        }
        step = 3;
        deadline = r.core.clock.nanoTime() + r.core.config.requestTimeout().toNanos();
        outstanding = fenced.size();
        for (OpenProbe p : fenced) {
            NodeRequest get = new NodeRequest(r.core.nextToken(), p.node, p.path, r.name, NodeOp.GET, Ids.RECORD_ID, 0,
                    0, null, null, 0, 0, 0, 0, 0, null, false);
            r.core.send(get, resp -> {
                if (step != 3) {
                    return;
                }
                if (resp.isOk() && resp.get() != null && resp.get().message() != null) {
                    p.recordRead = true;
                    p.record = MembershipRecord.decode(resp.get().message().state());
                } else if (resp.status() == Status.NOT_FOUND) {
                    p.recordRead = true;
                }
                done(3);
            });
        }
    }

    private void afterRecords() {
        List<OpenProbe> fenced = probes.values().stream().filter(p -> p.fenced && p.recordRead).toList();
        r.unfencedAtOpen.clear();
        for (String n : r.core.placement.group()) {
            if (fenced.stream().noneMatch(p -> p.node.equals(n))) {
                r.unfencedAtOpen.add(n);
            }
        }
        // The newest record is on every copy written since the last membership change; the
        // quorum argument of the probe only holds if the records themselves were read from
        // groupSize - 1 nodes (nodes without a copy count: they hold no record).
        int groupSize = r.core.placement.group().size();
        long heard = fenced.size();
        if (heard < groupSize - 1) {
            r.failOpen(Status.TIMEOUT, "records read from only " + heard + " of " + groupSize + " nodes; try again");
            return;
        }
        MembershipRecord best = null;
        for (OpenProbe p : fenced) {
            if (p.record != null && p.record.newerThan(best)) {
                best = p.record;
            }
        }
        if (best == null && heard < groupSize && !HeardNodes.newQueueWithNodeDown(r, fenced, heard, groupSize, freshProbe)) {
            return;
        }
        if (best != null && heard < groupSize && !HeardNodes.newestRecordSurely(r, fenced, best, groupSize)) {
            return;
        }
        if (best != null && fenceRounds == 1) {
            List<String> lost = HeardNodes.lostDiskSince(best, fenced);
            long floor = Epochs.counter(best.epoch()) + Epochs.LOST_DISK_MARGIN;
            if (!lost.isEmpty() && Epochs.counter(epoch) < floor) {
                // A takeover that fenced only the node that lost its disk (the other node down) left
                // its epoch nowhere else: fence again above any such epoch, so a writer still running
                // with it is fenced by this open instead of fencing it (see Epochs.LOST_DISK_MARGIN).
                // The floor counts from the record, not from this open's choice: an open retried
                // after this one fenced there starts above it and goes on without a second raise.
                r.event(String.join(", ", lost) + " lost its disk since the newest record (epoch "
                        + Epochs.counter(best.epoch()) + "): epochs fenced there only are gone with it; fencing again at epoch "
                        + floor + " instead of " + Epochs.counter(epoch));
                fenceAt(floor);
                return;
            }
        }
        if (best == null && fenced.stream().allMatch(p -> p.size == 0)) {
            // A new queue: the two nodes of its placement, the rule's pair first, then the next
            // ones of the group that answered (a node of the pair that is down is skipped). Later
            // opens and readers find the copies wherever they are: they probe every node of the
            // group and follow the newest record, never the rule.
            List<Member> ms = new ArrayList<>();
            for (String n : r.core.placement.orderFrom(r.name)) {
                for (OpenProbe p : fenced) {
                    if (p.node.equals(n) && ms.size() < 2) {
                        ms.add(member(p, SyncState.SYNC));
                    }
                }
            }
            if (ms.size() < 2) {
                r.failOpen(QueueReplica.NOT_REPLICATED, "could not create the queue on two nodes");
                return;
            }
            r.incarnation = newIncarnation();
            r.core.freshFences.remove(r.name);
            r.opened(epoch, ms, null, 0);
            return;
        }
        if (best == null) {
            // No record anywhere (created by something else): the biggest copy is the source, an
            // intact one holding messages before any DAMAGED one (fencing may have created empty ones).
            List<OpenProbe> bySize = new ArrayList<>(fenced);
            bySize.sort(Comparator.comparing((OpenProbe p) -> p.damaged || p.size == 0).thenComparing(
                    Comparator.comparingLong((OpenProbe p) -> p.size).reversed()));
            if (bySize.isEmpty()) {
                r.failOpen(Status.TIMEOUT, "no copy answered");
                return;
            }
            if (bySize.get(0).damaged) {
                r.event("ALARM: every copy holding messages is DAMAGED: served from " + bySize.get(0).node
                        + " anyway; acknowledged messages may be missing or deleted ones back");
            }
            String target = bySize.size() > 1 ? bySize.get(1).node : null;
            r.incarnation = newIncarnation();
            r.opened(epoch, List.of(member(bySize.get(0), SyncState.SYNC)), target, bySize.get(0).size);
            return;
        }
        final MembershipRecord rec = best;
        // Records written before incarnations existed carry none: the queue gets one from now on.
        r.incarnation = rec.incarnation() != 0 ? rec.incarnation() : newIncarnation();
        alarmOnOtherIncarnation(fenced, rec);
        List<OpenProbe> candidates = new ArrayList<>();
        for (MembershipRecord.Entry e : rec.members()) {
            OpenProbe p = probes.get(e.node());
            // A copy named SYNC holds at least one record (every copy gets one as soon as it joins);
            // none at all means the node lost its data since: not a source.
            if (e.sync() == SyncState.SYNC && p != null && p.fenced && p.recordRead && p.record != null) {
                candidates.add(p);
            }
        }
        if (candidates.isEmpty()) {
            r.failOpen(Status.TIMEOUT, "no in-sync copy reachable; members " + rec.members());
            return;
        }
        if (!keepIntact(candidates, rec)) {
            return;
        }
        // One in-sync copy alone is the source only when the other one named by the record is known
        // down. A copy's transaction number cannot show that it lost a suffix (a truncated journal
        // replays as an earlier, consistent state), so while the other node may still answer (its
        // probe missed, e.g. its connection came up after the probe went out) the open waits for it:
        // found by ProcessFaultsTest, where an owner opening 30 ms before its link to the intact node
        // was up rebuilt the third node from the truncated copy and lost 1,217 acknowledged puts.
        if (candidates.size() == 1) {
            for (MembershipRecord.Entry e : rec.members()) {
                OpenProbe other = probes.get(e.node());
                boolean answered = other != null && (other.fenced || other.lostDiskAtFence);
                if (e.sync() == SyncState.SYNC && !e.node().equals(candidates.get(0).node) && !answered
                        && r.core.health(e.node()).up()) {
                    r.failOpen(Status.TIMEOUT, "waiting for the in-sync copy on " + e.node()
                            + " (not known down; the copy on " + candidates.get(0).node + " alone may lack its last writes)");
                    return;
                }
            }
        }
        if (candidates.size() == 2 && candidates.stream().allMatch(p -> sameVersion(p.record, rec))
                && sameContent(candidates.get(0), candidates.get(1))) {
            r.opened(epoch, List.of(member(candidates.get(0), SyncState.SYNC), member(candidates.get(1), SyncState.SYNC)),
                    null, size(candidates.get(0)));
            return;
        }
        if (candidates.size() == 2) {
            r.event("copies differ: " + identity(candidates.get(0)) + " vs " + identity(candidates.get(1))
                    + "; one is rebuilt from the other");
        }
        // The copy that holds the newest record, then the one that applied more mutations, is the source.
        candidates.sort(Comparator.comparing((OpenProbe p) -> sameVersion(p.record, rec) ? 1 : 0)
                .thenComparingLong(p -> p.lastSeq)
                .thenComparingLong(p -> p.size).reversed());
        OpenProbe source = candidates.get(0);
        String target = null;
        for (MembershipRecord.Entry e : rec.members()) {
            OpenProbe p = probes.get(e.node());
            if (!e.node().equals(source.node) && p != null && p.fenced && r.core.health(e.node()).up()) {
                target = e.node();
            }
        }
        r.opened(epoch, List.of(member(source, SyncState.SYNC)), target, size(source));
    }

    /** Drawn from the core's random numbers, not a thread's: a simulated seed replays exactly. */
    private long newIncarnation() {
        return r.core.random.nextLong(1, Long.MAX_VALUE);
    }

    /**
     * A copy holding messages under a record of another incarnation than the newest record's: the
     * queue was created twice (see {@link HeardNodes#newQueueWithNodeDown}: a node heard at creation had lost
     * its copy while the node of the other copy was down). The newest record decides which copies
     * serve; the other one's messages are not read. Said loudly, never silently dropped.
     */
    private void alarmOnOtherIncarnation(List<OpenProbe> fenced, MembershipRecord rec) {
        for (OpenProbe p : fenced) {
            if (p.record != null && p.record.incarnation() != 0 && rec.incarnation() != 0
                    && p.record.incarnation() != rec.incarnation() && size(p) > 0) {
                r.event("ALARM: the copy on " + p.node + " holds " + size(p) + " messages of another creation of "
                        + r.name + " (record " + p.record.epoch() + "." + p.record.seq() + ", members "
                        + p.record.members().stream().map(MembershipRecord.Entry::node).toList()
                        + "); the queue was created twice (a node down while the other copy's disk was lost);"
                        + " served from the newest record's members " + rec.members().stream().map(MembershipRecord.Entry::node).toList()
                        + ", those messages are not delivered");
            }
        }
    }

    /**
     * Drops the DAMAGED copies from the candidate sources when an intact one is among them (the
     * damaged one is then the rebuild target). When all are damaged: waits (the open fails TIMEOUT)
     * for an in-sync copy the record names that did not answer, else keeps them with an ALARM.
     *
     * @return false when the open failed
     */
    private boolean keepIntact(List<OpenProbe> candidates, MembershipRecord rec) {
        List<OpenProbe> damaged = candidates.stream().filter(p -> p.damaged).toList();
        if (damaged.isEmpty()) {
            return true;
        }
        if (damaged.size() < candidates.size()) {
            candidates.removeAll(damaged);
            r.event("DAMAGED copy on " + nodes(damaged) + " (its server lost journal records of it): not in sync,"
                    + " rebuilt from " + candidates.get(0).node);
            return true;
        }
        List<String> unheard = new ArrayList<>();
        for (MembershipRecord.Entry e : rec.members()) {
            OpenProbe p = probes.get(e.node());
            if (e.sync() == SyncState.SYNC && (p == null || !p.fenced || !p.recordRead)) {
                unheard.add(e.node());
            }
        }
        if (!unheard.isEmpty()) {
            r.failOpen(Status.TIMEOUT, "the in-sync copy on " + nodes(damaged) + " is DAMAGED; waiting for the one on "
                    + String.join(", ", unheard));
            return false;
        }
        r.event("ALARM: every in-sync copy is DAMAGED (" + nodes(damaged) + "): served anyway; acknowledged"
                + " messages may be missing or deleted ones back");
        return true;
    }

    static boolean sameVersion(MembershipRecord a, MembershipRecord b) {
        return a != null && b != null && a.epoch() == b.epoch() && a.seq() == b.seq();
    }

    private Member member(OpenProbe p, SyncState sync) {
        Member m = new Member(p.node, sync, p.path);
        m.open = true;
        m.wireEpoch = p.wire;
        m.txn = p.fenceTxn;
        m.predictedTxn = p.fenceTxn;
        m.seq = p.lastSeq;
        m.sentSeq = p.lastSeq;
        r.catchUp.known(m, p.lastSeq, p.digest);
        m.committed = p.lastSeq; // what the copies hold at open is taken as committed (see CommitPoint)
        m.hasRecord = p.record != null;
        m.damaged = p.damaged;
        m.store = p.store;
        return m;
    }
}
