package org.jameskvs.replication;

import java.util.List;

/**
 * What an open's probe learnt of one node of the group ({@link OpenProcedure}): whether it holds a
 * copy and at which epoch and owner, then the fence OPEN's answer (the copy's transaction number,
 * DAMAGED flag, last seq and digest) and the membership record read from it; and how two copies
 * are compared by content.
 */
final class OpenProbe {
    final String node;
    NodePath path;
    boolean hasCopy;
    long epoch;
    String owner = "";
    long size;
    boolean fenced;
    /**
     * The fence was refused STORE_CHANGED: the node lost the disk the probe saw. Its copy is gone
     * for good, so an open does not wait for it as it waits for an in-sync copy that may answer.
     */
    boolean lostDiskAtFence;
    long fenceTxn;
    /** The fence OPEN's answer flags the copy DAMAGED (final: nobody else writes to it after the fence). */
    boolean damaged;
    /** The copy's content identity at the fence (final, as above): data mutations applied and their digest. */
    long lastSeq = -1;
    long digest;
    /** The node's store at the fence (0: unknown), see {@link MembershipRecord#witnessed}. */
    long store;
    long wire;
    boolean recordRead;
    MembershipRecord record;

    OpenProbe(String node) {
        this.node = node;
    }

    /** The probes' node names, for events. */
    static String nodes(List<OpenProbe> probes) {
        return String.join(", ", probes.stream().map(p -> p.node).toList());
    }

    /**
     * Copies are equal iff (epoch, last seq, digest) are equal: the fencing epoch (the writer
     * process, not the per-connection generation, see {@link Epochs}) they were last owned at
     * (before our fence), the data mutations they applied and the rolling digest over them (see the
     * protocol's package doc). Counts alone (transactions, size) cannot see a lost record whose
     * neighbours kept their numbers; the digest does. An unknown seq (-1) is never equal.
     */
    static boolean sameContent(OpenProbe a, OpenProbe b) {
        return a.lastSeq >= 0 && Epochs.fencingOf(a.epoch) == Epochs.fencingOf(b.epoch) && a.lastSeq == b.lastSeq
                && a.digest == b.digest;
    }

    /** The copy's content identity as events show it. */
    static String identity(OpenProbe p) {
        return p.node + " (epoch " + Epochs.counter(Epochs.fencingOf(p.epoch)) + ", seq " + p.lastSeq + ", digest "
                + Long.toHexString(p.digest) + ")";
    }

    /** The copy's messages: its size less the membership record it holds. */
    static long size(OpenProbe p) {
        return Math.max(0, p.size - (p.record != null ? 1 : 0));
    }
}
