package org.jameskvs.replication;

import org.jameskvs.protocol.Status;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Whether the nodes an open heard can tell what the queue holds ({@link OpenProcedure}, after its
 * probe and after reading the records). An open hears all but one node of the group at least; the
 * members of a queue are two nodes, so it hears a member of any existing record, unless a node heard
 * lost its disk. These rules cover that case: a queue is not created again over a trace of an
 * earlier open ({@link #looksNeverOpened}, {@link #newQueueWithNodeDown}), and the newest record
 * heard is taken only when enough nodes heard have kept their disks ({@link #newestRecordSurely}).
 * A rule that says no fails the open with TIMEOUT: the caller retries, and the open goes on once the
 * nodes not heard answer.
 */
final class HeardNodes {
    private HeardNodes() {
    }

    /**
     * Whether {@code best}, the newest record on the nodes heard (fewer than the group), is surely the
     * newest one there is. The quorum argument (with at most one node not heard, one of the two
     * members of any newer record was heard) holds only for nodes heard with their disk: a node that
     * lost its disk since {@code best} was written answers "no newer record" about records it once
     * held, the newer record's other member may be the node not heard, and opening {@code best}
     * then loses what was acknowledged since (simulation seed 7865). So a node counts only if it
     * holds {@code best} itself or {@code best} names it with the store it answers with now
     * ({@link MembershipRecord#witnessed}); with fewer than {@code groupSize - 1} such nodes the open
     * waits (TIMEOUT, the caller retries) for the nodes not heard. Records without witnesses (written
     * before store ids existed) are taken as before.
     */
    static boolean newestRecordSurely(QueueReplica r, List<OpenProbe> fenced, MembershipRecord best, int groupSize) {
        if (best.witnesses().isEmpty()) {
            return true;
        }
        List<String> counted = new ArrayList<>();
        List<String> notCounted = new ArrayList<>();
        for (OpenProbe p : fenced) {
            boolean holdsBest = p.record != null && OpenProcedure.sameVersion(p.record, best);
            if (holdsBest || best.witnessed(p.node, p.store)) {
                counted.add(p.node);
            } else {
                notCounted.add(p.node);
            }
        }
        if (counted.size() >= groupSize - 1) {
            return true;
        }
        List<String> unheard = new ArrayList<>(r.core.placement.group());
        fenced.forEach(p -> unheard.remove(p.node));
        r.failOpen(Status.TIMEOUT, "the newest record heard may not be the newest: " + String.join(", ", notCounted)
                + " answered with another store than the record names (lost its disk since), and a newer record"
                + " may be on it and on " + String.join(", ", unheard) + "; waiting for " + String.join(", ", unheard));
        return false;
    }

    /**
     * The nodes that lost their disk since {@code best} was written: {@code best} names them with a
     * store, they answer now with another one, and they do not hold {@code best}. An epoch a writer
     * fenced only such a node with (a takeover while the other node of a two-node group was down)
     * is known nowhere any more, so the open must not choose its epoch from what is left
     * ({@link OpenProcedure}: it fences again {@link Epochs#LOST_DISK_MARGIN} higher). Empty for
     * records written before store ids existed.
     */
    static List<String> lostDiskSince(MembershipRecord best, List<OpenProbe> fenced) {
        List<String> lost = new ArrayList<>();
        if (best.witnesses().isEmpty()) {
            return lost;
        }
        for (OpenProbe p : fenced) {
            boolean holdsBest = p.record != null && OpenProcedure.sameVersion(p.record, best);
            if (!holdsBest && p.store != 0 && best.witnesses().containsKey(p.node) && !best.witnessed(p.node, p.store)) {
                lost.add(p.node);
            }
        }
        return lost;
    }

    /**
     * No record on the {@code heard} nodes (fewer than the group): either a new queue, or one whose
     * every reachable copy lost its data while the node with the only good copy is away. The open
     * goes on (creating the queue on two of the nodes heard) only when it can be the former: every
     * node heard holds an empty queue (the fence leaves one; a node with messages but no record
     * holds a queue something else created: only all nodes can tell where its data is), the probe
     * found no trace of an earlier open ({@link #looksNeverOpened}), at least two were heard, and
     * every node not heard is known down (heartbeat): one that is up but missed a step may hold the
     * record, so the open waits for it (TIMEOUT, the caller retries).
     *
     * <p>Why a node that is down cannot hold the record: at least {@code groupSize - 1} nodes were
     * fenced and read, and a record is on both members of its queue, so at least one member of any
     * existing queue was heard, unless that member lost its disk while the other one is down. The
     * trace check catches that case whenever a node heard took part in an earlier open (with all
     * nodes up at creation, every node did). What is left: a queue created while a node was down
     * (that node has no trace unless the writer was still open when it came back: then the writer
     * leaves one, {@code QueueReplica#untraced}), then its copies' nodes one down and one wiped, and
     * that node heard: the queue is created a second time. Which creation's record is newer then decides which copies
     * serve; the open that sees both creations raises an ALARM naming the copy of the other one that
     * holds messages (each creation has its own {@link MembershipRecord#incarnation}).
     *
     * <p>Two creators racing while a node is down fence the same nodes: the higher epoch wins on
     * both and the other open fails (STALE_EPOCH), as with every node up. A node that comes back
     * later holds no copy (or an empty fenced one, without a record): the newest record names the
     * members and wins.
     *
     * @return whether the open goes on to create the queue; false when it failed
     */
    static boolean newQueueWithNodeDown(QueueReplica r, List<OpenProbe> fenced, long heard, int groupSize,
                                        boolean freshProbe) {
        String why = whyNotNew(r, fenced, freshProbe);
        if (why != null) {
            r.failOpen(Status.TIMEOUT, "no record of " + r.name + " on " + heard + " of " + groupSize + " nodes; " + why);
            return false;
        }
        List<String> unheard = unheard(r, fenced);
        r.event("new queue with " + String.join(", ", unheard) + " down: created on two reachable nodes");
        r.untraced.addAll(unheard);
        return true;
    }

    /**
     * The rule of {@link #newQueueWithNodeDown} without its effects: why the nodes {@code heard}
     * (fewer than the group, none with a record) cannot tell that the queue is new; null when they can.
     * {@link OpenProcedure} asks it right after the probe too, where every queue heard is empty: an
     * open that can only fail then fails before it fences anything (see there).
     */
    static String whyNotNew(QueueReplica r, Collection<OpenProbe> heard, boolean freshProbe) {
        List<String> unheard = unheard(r, heard);
        List<String> unheardUp = unheard.stream().filter(n -> r.core.health(n).up()).toList();
        boolean empty = heard.stream().allMatch(p -> p.size == 0);
        if (!empty) {
            return "a copy without a record is found only when every node answers";
        }
        if (!freshProbe) {
            return "an earlier open left the queue on a node heard: its copies may be on "
                    + String.join(", ", unheard) + " and a node heard that lost its data; waiting for every node";
        }
        if (heard.size() < 2) {
            return "a new queue needs two reachable nodes";
        }
        if (!unheardUp.isEmpty()) {
            return "waiting for " + String.join(", ", unheard) + " (up, but did not answer)";
        }
        return null;
    }

    private static List<String> unheard(QueueReplica r, Collection<OpenProbe> heard) {
        List<String> unheard = new ArrayList<>();
        for (String n : r.core.placement.group()) {
            if (heard.stream().noneMatch(p -> p.node.equals(n))) {
                unheard.add(n);
            }
        }
        return unheard;
    }

    /**
     * Whether the probe found no trace of an earlier open on any node that answered: no queue of
     * that name, or only an empty one (no record) left by this process's own earlier attempt at
     * creating it ({@code freshFences}: such an attempt may have fenced and then failed). Every open
     * fences every node that answers, leaving at least an empty queue there, so a queue opened
     * before while these nodes were up shows on them even when the nodes of its copies are down or
     * lost their data: it is not taken for a new one (found by the simulation, seed 270: a copy lost
     * to a crash, the other copy's node cut, and the queue created again over it).
     */
    static boolean looksNeverOpened(QueueReplica r, Collection<OpenProbe> probes) {
        java.util.Set<Long> own = r.core.freshFences.getOrDefault(r.name, java.util.Set.of());
        for (OpenProbe p : probes) {
            if (p.hasCopy && (p.size != 0 || !own.contains(Epochs.fencingOf(p.epoch)))) {
                return false;
            }
        }
        return true;
    }
}
