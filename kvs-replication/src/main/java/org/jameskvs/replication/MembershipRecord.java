package org.jameskvs.replication;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The replication's own record, stored as the state of the reserved message {@link Ids#RECORD_ID}
 * inside the queue on every copy, and rewritten (a REPLACE, i.e. an ordinary fenced mutation) on
 * each membership change and each lease renewal.
 *
 * <p>Why inside the queue: the record must be fenced exactly like the data. After a new owner has
 * fenced the copies (OPEN with a higher epoch), the old owner can no longer change the record, so
 * what the new owner reads afterwards is final. The version ({@code epoch.seq}) orders records; the
 * highest version found names the current members and which of them are SYNC.
 *
 * <p>Proof of equality without reading the data: {@code refSeq} names an earlier record that both
 * members applied while both were SYNC and no request had to be retried, and each entry's
 * {@code refTxn} is the exact transaction number that member had right after applying it (learnt
 * from its answer). From that point both copies received the same mutations in the same order, so
 * if both now hold this record version, have the same size, and moved their transaction numbers by
 * the same amount since {@code refTxn}, they applied the same mutations: both stay SYNC. Otherwise
 * ({@code refSeq = -1}, a retry happened, deltas differ) the copy that is ahead is the source and
 * the other one is rebuilt.
 *
 * <p>A write OPEN is a transaction too (the server journals the new epoch), so an OPEN that reached
 * one copy only (a path switch, or another writer's fence) could make up for a mutation the other
 * copy applied and this one did not. Hence each entry also names the member's {@code wire} epoch
 * (the handle its mutations went through), and the proof holds only while each copy's epoch is
 * still that one: no OPEN at all reached it since. A path switch also ends the proof at once (the
 * writer's next records carry {@code refSeq = -1}). Records without it (older versions) prove
 * nothing.
 *
 * <p>The {@code incarnation} names the queue's creation: a random number drawn when an open
 * creates the queue (no record on any node heard) and carried by every later record. Two records of
 * one queue name with different incarnations mean the queue was created twice: possible only when
 * a node of the group was down at creation and the nodes heard had all lost their copy (a wiped
 * disk while the other copy's node was away). The open then raises an ALARM naming the copy of the
 * other incarnation that still holds messages (see {@code OpenProcedure}).
 *
 * <p>The {@code witnesses} name, for each node of the group the writer had heard, the store it had
 * heard there (a server's store id: the same across its restarts, a new one after it lost its disk).
 * Node {@code n} listed with store {@code s}, and answering later with the same {@code s}, has kept
 * its disk since before this record was written: every newer record written to it is still there.
 * A node answering with another store lost its disk since (or was never heard by this writer), so
 * its "no newer record here" proves nothing: {@code OpenProcedure} does not count it.
 *
 * @param renewals lease counter: grows at every renewal; a watcher that sees it unchanged for the
 *                 lease timeout considers the owner gone
 * @param incarnation the queue's creation id; 0 when unknown (records written before it existed)
 * @param witnesses node -> store id as the writer last heard it; empty in records written before
 *                  store ids existed (they prove nothing about a node's disk)
 */
record MembershipRecord(long epoch, long seq, String owner, long renewals, long refSeq, List<Entry> members,
                        long incarnation, java.util.SortedMap<String, Long> witnesses) {

    MembershipRecord(long epoch, long seq, String owner, long renewals, long refSeq, List<Entry> members) {
        this(epoch, seq, owner, renewals, refSeq, members, 0);
    }

    MembershipRecord(long epoch, long seq, String owner, long renewals, long refSeq, List<Entry> members,
                     long incarnation) {
        this(epoch, seq, owner, renewals, refSeq, members, incarnation, java.util.Collections.emptySortedMap());
    }

    /**
     * Whether {@code node}, answering now with {@code store}, has kept its disk since this record
     * was written (see the class doc); false when the record lists no store for it, or another one.
     */
    boolean witnessed(String node, long store) {
        Long s = witnesses.get(node);
        return s != null && store != 0 && s == store;
    }

    /** @param wire the member's wire epoch when the record was written; -1 when unknown */
    record Entry(String node, SyncState sync, long refTxn, long wire) {
        Entry(String node, SyncState sync, long refTxn) {
            this(node, sync, refTxn, -1);
        }
    }

    boolean newerThan(MembershipRecord o) {
        return o == null || epoch > o.epoch || (epoch == o.epoch && seq > o.seq);
    }

    Entry entry(String node) {
        for (Entry e : members) {
            if (e.node.equals(node)) {
                return e;
            }
        }
        return null;
    }

    byte[] encode() {
        StringBuilder sb = new StringBuilder();
        sb.append("v=").append(epoch).append('.').append(seq).append(";o=").append(owner.replace(';', '_'))
                .append(";l=").append(renewals).append(";r=").append(refSeq).append(";i=").append(incarnation)
                .append(";m=");
        for (int i = 0; i < members.size(); i++) {
            Entry e = members.get(i);
            sb.append(i == 0 ? "" : ",").append(e.node).append(':').append(e.sync).append(':').append(e.refTxn)
                    .append(':').append(e.wire);
        }
        if (!witnesses.isEmpty()) {
            sb.append(";w=");
            boolean first = true;
            for (java.util.Map.Entry<String, Long> w : witnesses.entrySet()) {
                sb.append(first ? "" : ",").append(w.getKey()).append(':').append(Long.toHexString(w.getValue()));
                first = false;
            }
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** @return null when the bytes are not a record (never written, or foreign). */
    static MembershipRecord decode(byte[] state) {
        try {
            String s = new String(state, StandardCharsets.UTF_8);
            long epoch = 0, seq = 0, renewals = 0, refSeq = -1, incarnation = 0;
            String owner = "";
            List<Entry> members = new ArrayList<>();
            java.util.TreeMap<String, Long> witnesses = new java.util.TreeMap<>();
            for (String part : s.split(";")) {
                int eq = part.indexOf('=');
                String k = part.substring(0, eq), v = part.substring(eq + 1);
                switch (k) {
                    case "v" -> {
                        int dot = v.indexOf('.');
                        epoch = Long.parseLong(v.substring(0, dot));
                        seq = Long.parseLong(v.substring(dot + 1));
                    }
                    case "o" -> owner = v;
                    case "l" -> renewals = Long.parseLong(v);
                    case "r" -> refSeq = Long.parseLong(v);
                    case "i" -> incarnation = Long.parseLong(v);
                    case "m" -> {
                        for (String m : v.split(",")) {
                            if (m.isEmpty()) {
                                continue;
                            }
                            String[] f = m.split(":");
                            members.add(new Entry(f[0], SyncState.valueOf(f[1]), Long.parseLong(f[2]),
                                    f.length > 3 ? Long.parseLong(f[3]) : -1));
                        }
                    }
                    case "w" -> {
                        for (String w : v.split(",")) {
                            int colon = w.lastIndexOf(':');
                            if (colon > 0) {
                                witnesses.put(w.substring(0, colon), Long.parseUnsignedLong(w.substring(colon + 1), 16));
                            }
                        }
                    }
                    default -> { }
                }
            }
            return new MembershipRecord(epoch, seq, owner, renewals, refSeq, List.copyOf(members), incarnation,
                    java.util.Collections.unmodifiableSortedMap(witnesses));
        } catch (RuntimeException e) {
            return null;
        }
    }
}
