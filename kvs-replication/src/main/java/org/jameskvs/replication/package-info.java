/**
 * Replication of James KVS Spool queues: every queue is kept on two KVS nodes, and a write is
 * acknowledged only when both copies acknowledged it (paper sections III.A, III.C, III.D, IV.D).
 *
 * <h2>Layers</h2>
 * <ul>
 * <li><b>The state machine</b> ({@link org.jameskvs.replication.ReplicationCore},
 * {@link org.jameskvs.replication.QueueReplica}, {@code OpenProcedure}, {@code Rebuild},
 * {@link org.jameskvs.replication.ReadOnlyReplica} for read-only readers): pure and
 * deterministic, single-threaded, driven by client calls, node answers and clock ticks; time and
 * network are injected ({@link org.jameskvs.replication.Clock},
 * {@link org.jameskvs.replication.NodeTransport}). The management table
 * ({@link org.jameskvs.replication.ManagementTable}) is its read-only view.</li>
 * <li><b>Its test: a deterministic simulation of the real thing</b> ({@code ReplicationPropertyTest},
 * test code): the state machine against the real server (its QueueStore and its protocol
 * pipeline on Netty EmbeddedChannels, kvs-server's {@code EmbeddedServer}; requests encoded and
 * answers decoded by the client's codec), on virtual time, with a network that delays, cuts a path
 * or a node or only the answers, breaks connections, duplicates frames, and crashes servers with
 * their journal (replayed) or without it. Everything runs on one thread and every random choice
 * follows from the seed (the core draws its own random numbers: {@code processId} seeds them), so
 * a failing seed replays event for event.</li>
 * <li><b>The adapter</b> ({@link org.jameskvs.replication.ReplicatedQueueOpener},
 * {@link org.jameskvs.replication.ReplicatedQueue}, {@code KvsNodeTransport}, {@code CallHandOff}):
 * real KvsClient connections (two per node: active and standby path) and the state machine on one
 * Netty event loop, the real clock; callers' outcomes handed to one callback thread in batches, in
 * the order the state machine produced them, with a backstop (6 request timeouts, longer while a
 * rebuild makes progress: mutations parked on it wait) that gives a call the "unknown" outcome if
 * the state machine ever gives none, and a bound on the calls inside it ({@code maxCallsInside}:
 * callers beyond it wait, back-pressure instead of an unbounded backlog). The state machine judges
 * silence by {@code ObservedClock}: time in which the core's thread could not run (GC, CPU
 * starvation, a blocked loop) is not a node's silence. Hot-path structures: {@code TokenTable}
 * (answers by token), {@code MemberMap} (per-mutation answers). Configuration:
 * {@link org.jameskvs.replication.ReplicationConfig}.</li>
 * </ul>
 *
 * <h2>Guarantees</h2>
 * <ul>
 * <li>An OK for a mutation (put, delete, replace, clear) means both copies applied it. With only one
 * copy able to take writes, mutations fail ({@code STORAGE_ERROR}); the James side answers SMTP 4xx.</li>
 * <li><b>One sequence per queue</b> (the model: BookKeeper's entry ids given by the one fenced
 * writer). Every mutation sent to an in-sync copy carries the queue seq the writer gave it (its
 * first transmission to that copy; a retry on the other path repeats it): the server applies only
 * the next seq, answers a repeat with the first outcome (so a retry after a path switch is never
 * ambiguous) and refuses a gap; a gap above what the copy answered is closed by sending the
 * suffix again, one below it means the copy lost mutations (NG). A write OPEN takes no seq: a
 * reopened copy must hold at least every seq it answered and at most those sent to it, else it is
 * NG. A rebuild target gets unsequenced mutations until its REBASE, then the source's seqs.
 * Unsequenced copies (older ones, rebuild targets) are still checked by transaction numbers: a copy
 * that disagrees is NG: isolated, and the queue is re-synchronised onto a copy (CLEAR, then
 * block-wise copy while traffic continues).</li>
 * <li><b>Copies are compared by content</b> (the model: Kafka's leader-epoch truncation compares logs
 * by epoch and offset, not length): at open and takeover two in-sync copies are kept as they are
 * iff their (fencing epoch, last seq, digest) are equal (the fence OPEN's answer; the digest folds
 * every mutation's seq, operation, id and content, see kvs-protocol); otherwise the copy holding
 * the newest record, then the higher seq, is the source and the other is rebuilt. A rebuild ends
 * with REBASE: the target takes over the source's (seq, digest) at the last marker.</li>
 * <li>A copy its server flags DAMAGED (journal records lost at recovery, see the queue flags in
 * kvs-protocol) is never taken as in sync, whatever its transaction number: at open, takeover or a
 * member's reopen it is NG and rebuilt from the intact copy (the rebuild's CLEAR ends the mark).
 * With no intact copy it is served with an ALARM event; with an intact one away, the open waits.</li>
 * <li>Exactly one outcome per call; futures never complete exceptionally.</li>
 * <li><b>A node is declared lost for its silence only</b>: any answer on a path (not only a PING's)
 * proves it alive; a request fails over only when its copy has been silent for
 * {@code requestTimeout} since it was sent (at most 3 request timeouts in all); and the client's own
 * standstills do not count as silence ({@code ClientBehindTest}). A node killed, frozen or cut off
 * is still marked NG within about {@code heartbeatTimeout} of time the client could observe.</li>
 * <li>No split brain: writers are fenced by epochs (see {@code Epochs} and {@code OpenProcedure}).
 * After a takeover completes, no mutation the previous owner issues can be acknowledged.</li>
 * </ul>
 *
 * <h2>Ownership, takeover and lease</h2>
 * The owner opens its queues on both copies with its epoch. A restarted owner reclaims them (same
 * owner, epoch + 1); another James node takes them over with {@code takeOver} (admin) or
 * {@code takeOverWhenLeaseExpires}. Both run the same procedure: probe every node, fence every node
 * that answered with the higher epoch, then read the replication record (membership, sync states,
 * lease counter) kept inside the queue itself, where it is fenced like the data. The lease is that
 * record being rewritten every {@code leaseRenew}; a watcher takes over when it has not changed for
 * {@code leaseTimeout} of the watcher's own clock ({@code LeaseWatcher}). Safety never depends on
 * the lease, only on fencing.
 *
 * <h2>Known limits</h2>
 * <ul>
 * <li>Open and takeover need answers from all but one node of the group (the members of a queue are
 * two nodes; hearing all but one guarantees hearing a current member). A brand-new queue is created
 * with every node answering, or with the nodes not heard known down (heartbeat) and two empty nodes
 * heard: on the rule's pair, a node of it that is down replaced by the next node of the group. The
 * copies are found later wherever they are (every open and reader probes the whole group and follows
 * the newest record). A queue is never taken for new while a node heard holds a trace of an earlier
 * open (the empty queue every open leaves on every node it fences; a writer that created a queue
 * with a node down leaves it there when the node comes back). Left: a queue created with a node
 * down that came back after its writer closed, later one copy's node down and the other wiped while
 * that node is heard:
 * it is created again, and the open that later sees both creations raises an ALARM naming the copy
 * of the other one ({@code MembershipRecord.incarnation}); its messages are not merged.</li>
 * <li>Single-failure assumption: a node that lost its data (restarted without its journal) counts
 * as a failure until its copy is rebuilt. If, meanwhile, the survivor is also unreachable and a new
 * owner opens the queue, the records it reads may not name the newest copy.</li>
 * <li>Positions are per copy: after the copy that serves reads changes (another node, or the same
 * node's copy isolated and rebuilt, or copies found again by a reclaim), positions refer to the new
 * copy, and every READ result says so ({@code ReadResult.positionSpace} changes): a reader must then
 * rescan from position 0. A rebuilt copy holds the messages in the source's order (re-append passes,
 * see {@code Rebuild}), so the rescan hands mail out in FIFO order; its positions are its own.</li>
 * <li>Read-only opens ({@code OpenOptions.reader()}, for readers of other writers' queues) take no
 * part in fencing and read ONE in-sync copy named by the newest replication record, never "the first
 * node that has the queue" (fencing leaves an empty queue on the node that is not a copy). The copy
 * may be behind the other one (by at most the writes in flight, or by one recheck interval,
 * {@code leaseRenew}, after it was isolated); the reader switches when it fails or the record stops
 * naming it, and {@code ReadResult.positionSpace} changes (see {@code ReadOnlyReplica}).</li>
 * <li>A client standstill longer than 3 request timeouts (6 s) still breaks the node connections
 * that had requests in flight (the KvsClient's own timeout, on real time): those paths fail, and a
 * node both of whose connections broke is lost as before.
 * The lease is renewed on observed time, so a standstill delays the next renewal by its length.</li>
 * <li>Positions are still assigned by each server (not yet the PUT's seq), and a copy that missed
 * mutations is still rebuilt in full (CLEAR and copy), not brought up by its missing suffix.
 * A rebuild keeps the source's order also when its first marker is answered late (a STAT resent on
 * the other path after mail was put meanwhile): the next pass re-appends from the first message
 * the target already held ({@code RebuildLateMarkerTest}).</li>
 * </ul>
 */
package org.jameskvs.replication;
