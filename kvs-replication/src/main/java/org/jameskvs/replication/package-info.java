/**
 * Replication of James KVS Spool queues: every queue is kept on two KVS nodes, and a write is
 * acknowledged only when both copies acknowledged it (paper sections III.A, III.C, III.D, IV.D).
 *
 * <h2>Layers</h2>
 * <ul>
 * <li><b>The state machine</b> ({@link org.jameskvs.replication.ReplicationCore},
 * {@link org.jameskvs.replication.QueueReplica} with its parts {@code Answers}, {@code MemberPaths},
 * {@code Timers}, {@code RecordAndRebuild}, {@code CommitPoint}, {@code CatchUp}, {@code Sending} and
 * {@code NodeEvents}, {@code OpenProcedure} (with {@code OpenProbe} and {@code HeardNodes}), {@code Rebuild},
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
 * <h2>The state machine: transitions</h2>
 * One {@link org.jameskvs.replication.QueueReplica} per queue. The queue is in one phase
 * ({@code OPENING}, {@code READY}, {@code FENCED}, {@code CLOSED}); each of its (at most two)
 * members, a copy on one node, is in one {@link org.jameskvs.replication.SyncState} ({@code SYNC},
 * {@code REBUILDING}; {@code NG} copies are no longer members, only listed as isolated) and may be
 * {@code lost} (a SYNC copy unreachable while it is the only one in sync). Every transition below is
 * a named method of {@code QueueReplica} or of one of its parts, which keep no state of their own
 * (the replica holds it): {@code Answers} (node answers, the calls' outcomes), {@code MemberPaths}
 * (members' paths and liveness), {@code Timers} (tick, parked mutations, undos), {@code RecordAndRebuild} (the
 * record, a rebuild's start and end), {@code CommitPoint} (the commit point sent to the servers),
 * {@code CatchUp} (the writer's digest per copy, the catch-up log {@code SeqLog}, catch-up or full
 * rebuild), {@code Sending} (a request onto a member's wire, its seq), {@code NodeEvents} (the
 * heartbeat's verdicts on a node); nothing else changes these fields.
 * <table class="striped">
 * <caption>Queue phase</caption>
 * <tr><th>phase</th><th>event</th><th>next</th><th>action</th></tr>
 * <tr><td>OPENING</td><td>open procedure done ({@code opened})</td><td>READY</td><td>members from the
 * records; a rebuild if only one copy is in sync; record written</td></tr>
 * <tr><td>OPENING</td><td>a caller's open fails ({@code failOpen})</td><td>CLOSED</td><td>the
 * caller's open completes with the status</td></tr>
 * <tr><td>OPENING (a reclaim)</td><td>TIMEOUT or no second copy ({@code failOpen})</td><td>READY,
 * refusing writes</td><td>tried again on the next tick</td></tr>
 * <tr><td>OPENING (a reclaim)</td><td>any other refusal ({@code failOpen})</td><td>FENCED</td><td>as
 * below</td></tr>
 * <tr><td>READY</td><td>STALE_EPOCH from any copy ({@code fence})</td><td>FENCED</td><td>everything in
 * flight and every later call fail STALE_EPOCH</td></tr>
 * <tr><td>READY</td><td>no SYNC copy left, or the epoch's OPEN generations used up
 * ({@code Timers.tick} -&gt; {@code reclaim})</td><td>OPENING</td><td>in flight fails; probe, fence at epoch
 * + 1, follow the newest record</td></tr>
 * <tr><td>any</td><td>{@code close}</td><td>CLOSED</td><td>in flight fails</td></tr>
 * </table>
 * <table class="striped">
 * <caption>One copy (member), phase READY</caption>
 * <tr><th>state</th><th>event</th><th>next</th><th>action</th></tr>
 * <tr><td>SYNC / REBUILDING</td><td>mutation answered at the expected seq (or transaction)
 * ({@code Answers.onAnswer}, {@code Answers.account})</td><td>same</td><td>the call completes once both members
 * answered</td></tr>
 * <tr><td>SYNC / REBUILDING</td><td>SEQ_GAP above what the copy answered ({@code Answers.resequence})</td>
 * <td>same</td><td>the suffix is sent again</td></tr>
 * <tr><td>SYNC / REBUILDING</td><td>answer out of step: a seq below one it answered, SEQ_TOO_OLD, a
 * transaction number off, a read below its own number ({@code MemberPaths.markNg})</td><td>NG (isolated), unless
 * it is the only SYNC copy: then the other copy is isolated and this one re-based with an
 * ALARM</td><td>record written; a rebuild onto the next healthy node</td></tr>
 * <tr><td>SYNC / REBUILDING</td><td>a request silent for {@code requestTimeout}, or its path NG by
 * heartbeat, the other path usable ({@code MemberPaths.pathFailed} -&gt; {@code MemberPaths.reopen})</td><td>same</td><td>OPEN
 * on the other path (next generation), then the unanswered requests again, in order</td></tr>
 * <tr><td>SYNC, the other copy SYNC and reachable; or REBUILDING</td><td>both paths NG
 * ({@code MemberPaths.nodeLost})</td><td>NG (isolated)</td><td>record written; a rebuild onto the next healthy
 * node; mutations the survivor applied wait (parked) for it; the survivor's mutations from its
 * (seq, digest) on are logged for the copy's return ({@code CatchUp.departed}, {@code SeqLog}; at most
 * {@code catchUpLogEntries}, else given up)</td></tr>
 * <tr><td>SYNC, the only reachable SYNC copy</td><td>both paths NG ({@code MemberPaths.nodeLost})</td>
 * <td>SYNC, lost</td><td>writes refused (STORAGE_ERROR) until it is back; a REBUILDING partner is
 * isolated</td></tr>
 * <tr><td>SYNC, lost</td><td>its node up, reopen answered within the expected seq bounds
 * ({@code NodeEvents.onNodeUp}, {@code MemberPaths.onOpenAnswer})</td><td>SYNC</td><td>waiting requests sent; a partner
 * rebuilt</td></tr>
 * <tr><td>SYNC, lost</td><td>reopen answered outside the bounds</td><td>SYNC, re-based (ALARM: DATA
 * LOSS)</td><td>as {@code MemberPaths.markNg} on the only SYNC copy</td></tr>
 * <tr><td>any member</td><td>OPEN answered from another store than the copy's, or refused
 * {@code STORE_CHANGED} (the OPEN names the copy's store once known, so a node that lost its disk
 * takes neither the epoch nor the queue), or any other request answered {@code STORE_CHANGED} (its
 * handle's automatic re-open after a reconnect was refused: the replication's connections re-open
 * only on the store that first answered them; {@code Answers.onAnswer}): the node lost its disk
 * ({@code MemberPaths.lostDisk})</td><td>NG (isolated), also when it was the only SYNC copy (event
 * "lost its disk ... the queue waits")</td><td>never re-based on the empty store; with no SYNC copy left the next tick
 * reclaims, and the open waits for the other copy's node</td></tr>
 * <tr><td>any</td><td>reopen answer flags the copy DAMAGED</td><td>NG unless it is the only SYNC copy
 * (then served, ALARM)</td><td>a rebuild from the intact copy</td></tr>
 * <tr><td>SYNC / REBUILDING</td><td>the two copies answered a mutation differently
 * ({@code Answers.completeIfAnswered})</td><td>the copy that applied it at its seq stays; the other NG</td>
 * <td>the call fails (copies disagree); a copy that answered unsequenced (a rebuild target then, SYNC by
 * the time the answers are in) never decides against one that answered at its seq: it is the one isolated
 * (store-full simulation seed 3628)</td></tr>
 * <tr><td>SYNC, the other copy SYNC</td><td>a client PUT it refused with DISK_FULL (at its seq) that the
 * other copy applied, and no third node could take a copy ({@code Answers.completeIfAnswered})</td><td>SYNC</td>
 * <td>the PUT fails (DISK_FULL) and is undone on the copy that took it (a replacing PUT, which cannot be undone:
 * its id hidden from the writer's readers until a write of it is acknowledged); no isolation, so the queue keeps two
 * copies and its deletes still drain both nodes ({@code FullNodesDrainTest}). With a third node that can
 * take a copy: NG as below, the copy moves there</td></tr>
 * <tr><td>SYNC, both copies</td><td>tick, digests apart after such refusals, the queue quiet (every mutation
 * answered on both, nothing failed left to undo, nothing parked or rebuilding), both digests known at the
 * same seq ({@code CatchUp.alignIfQuiet})</td><td>SYNC</td><td>conditional REBASE (ALIGN): the copy not read
 * from takes the other's digest if it is at exactly the (seq, digest) the writer computed for it; refused:
 * its digest no longer followed, the next open compares the copies ({@code CatchUp.onAligned})</td></tr>
 * <tr><td>any member</td><td>answer with a store failure (DISK_FULL, STORAGE_ERROR)
 * ({@code RecordAndRebuild.storeRefused})</td><td>unchanged (what the answer itself means is decided as for any answer)</td>
 * <td>no rebuild of any queue onto that node ({@code RefusingStores}, one per process) for 1 s, doubling while it keeps refusing, up to 30 s, until it takes a PUT;
 * another node of the group is taken meanwhile</td></tr>
 * <tr><td>(new member)</td><td>fewer than two members, a node up and not waiting after a store failure
 * ({@code RecordAndRebuild.startRebuildIfPossible})</td>
 * <td>REBUILDING</td><td>CLEAR, record, block-wise copy from the SYNC copy while mutations go to
 * both ({@link org.jameskvs.replication.Rebuild}); on the node of the copy that left while a log of
 * it is kept: OPEN first, everything else held for it until decided (below)</td></tr>
 * <tr><td>REBUILDING, the copy that left back</td><td>its OPEN answer: (last seq, digest) one the log
 * holds, not DAMAGED, the OPEN at our epoch accepted ({@code CatchUp.decide})</td><td>REBUILDING (catch-up)</td>
 * <td>STAT marker on the source; the log's DELETEs and REPLACEs after its seq replayed (a replacing
 * PUT as a DELETE), the messages at positions after its seq copied at their positions; then as a
 * rebuild's last block (below). A log not reaching the marker, or a CLEAR in it: NG, rebuilt in full</td></tr>
 * <tr><td>REBUILDING, the copy that left back</td><td>its OPEN answer otherwise (another digest, a seq
 * the log does not hold: wiped, damaged, lost writes)</td><td>REBUILDING</td><td>CLEAR, what was held
 * for it, a full copy as above</td></tr>
 * <tr><td>REBUILDING</td><td>last block copied ({@code RecordAndRebuild.rebuildDone})</td><td>SYNC</td><td>REBASE to the
 * source's (seq, digest); held mutations released; parked calls acknowledged; record written; the
 * catch-up log freed</td></tr>
 * <tr><td>REBUILDING</td><td>its source isolated or lost</td><td>NG (isolated)</td><td>the rebuild is
 * aborted; no longer a member, so no later transition reopens it (also not the rest of the tick that
 * lost the source: {@code Timers.checkMember} times current members only)</td></tr>
 * </table>
 * <table class="striped">
 * <caption>A client PUT's id in the writer's commit point ({@code UncommittedPuts})</caption>
 * <tr><th>state</th><th>event</th><th>next</th><th>action</th></tr>
 * <tr><td>-</td><td>client PUT sent ({@code QueueReplica.mutate})</td><td>in flight</td><td>READ stops
 * before it, GET answers NOT_FOUND</td></tr>
 * <tr><td>in flight</td><td>acknowledged; or refused by both copies</td><td>-</td><td>shown (a refusal
 * shows whatever another PUT left)</td></tr>
 * <tr><td>in flight</td><td>failed otherwise (not replicated, outcome unknown, copies disagree)</td>
 * <td>failed</td><td>left out of READ and GET; a plain PUT no copy refused as a duplicate is to be
 * undone</td></tr>
 * <tr><td>failed, to undo</td><td>a tick with two write members and no client PUT of the id in
 * flight ({@code Timers.undoFailedPuts})</td><td>undoing</td><td>DELETE of the id, purpose
 * {@code UNDO}: sequenced like a client mutation, to both write members (a rebuild notes it like a
 * client DELETE); NOT_FOUND counts as OK</td></tr>
 * <tr><td>undoing</td><td>the DELETE acknowledged by both copies, no later failure of the id
 * ({@code UncommittedPuts.undone})</td><td>-</td><td>the failed PUT is on no copy: nothing to hide</td></tr>
 * <tr><td>undoing</td><td>the DELETE failed</td><td>failed, to undo</td><td>sent again on a later tick</td></tr>
 * <tr><td>failed</td><td>a later client PUT of the id acknowledged, or answered DUPLICATE_ID by both
 * copies (the failed one is on both and its caller counts it stored); a client DELETE or CLEAR
 * acknowledged</td><td>-</td><td>no undo: an acknowledged PUT is never undone</td></tr>
 * </table>
 * <table class="striped">
 * <caption>A copy's commit point ({@code CommitPoint}: {@code Member.committed}, its seqs)</caption>
 * <tr><th>state</th><th>event</th><th>next</th><th>action</th></tr>
 * <tr><td>-</td><td>the open found the copy ({@code OpenProcedure})</td><td>its last seq</td><td>what
 * the copies hold is taken as committed</td></tr>
 * <tr><td>c</td><td>a sequenced mutation gets its seq on the copy ({@code CommitPoint.sent})</td>
 * <td>c, or higher</td><td>queued; c moves past every settled mutation at the head (its call has its
 * outcome; a failed PUT to undo holds it until the undo is acknowledged; records never hold it);
 * sent with the mutation (flag 0x0008)</td></tr>
 * <tr><td>c, above what was sent</td><td>tick ({@code CommitPoint.tick})</td><td>same</td><td>COMMIT
 * on the copy's write handle</td></tr>
 * <tr><td>c</td><td>SEQ_GAP, or a reopen giving seqs again ({@code CommitPoint.renumbered})</td>
 * <td>same</td><td>mutations above the copy's seq leave its queue (sent again, queued again)</td></tr>
 * <tr><td>(rebuild target)</td><td>REBASE ({@code CommitPoint.rebased})</td><td>the source's, at most
 * the base seq</td><td>the source's unsettled mutations up to the base are queued for it too</td></tr>
 * </table>
 * Timers ({@code Timers.tick}, every {@code tickMillis}): request and OPEN timeouts (above; per member,
 * {@code Timers.checkMember}, for the members that are still members when their turn comes), parked mutations
 * failing when no rebuild progresses for 5 request timeouts, the lease renewal (a record write every
 * {@code leaseRenew}), the undo of failed PUTs, the alignment of digests apart after a full store's
 * refusals, the COMMIT of an idle queue's commit point.
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
 * suffix again, one below it means the copy lost mutations (NG). "Answered" counts only outcomes
 * that took the seq ({@code Status.takesQueueSeq}: applied, refused for good, or DISK_FULL, which the
 * server keeps as a SKIP in its store's reserve so that a full copy stays in step with one that had
 * room); STORAGE_ERROR leaves the seq to the resend. A write OPEN takes no seq: a
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
 * <li><b>Position = the PUT's seq</b>, on both copies (the server numbers a PUT with its seq), and
 * a rebuild copies the source's messages at the source's positions (then REBASE gives the target
 * the source's next position too). So a reader's cursor is valid on either copy: when the copy
 * serving the writer's reads changes (its node killed, frozen or cut; the copy isolated and
 * rebuilt) the position space ({@code ReadResult.positionSpace}) is kept, the reader goes on where
 * it was, nothing is skipped or handed out twice, and the order (FIFO per priority) is the put
 * order, also on a rebuilt copy ({@code ReadCopyChangeTest}).</li>
 * <li><b>The writer's reads stop at its commit point</b> (the model: BookKeeper's last-add-confirmed):
 * READ and GET through the writer never show a message whose PUT is not acknowledged on two copies
 * (READ stops before it and resumes there) or whose PUT failed (left out, also after a rebuild
 * copied it to a second copy): a mail whose intake PUT failed is not delivered by this writer
 * ({@code UncommittedPuts}, {@code UncommittedPutHiddenTest}). Such a PUT is then undone on the
 * copies (a DELETE once the queue can write again), so that a later writer (reopened, restarted,
 * taking over) does not deliver it either ({@code UndoFailedPutTest}).</li>
 * <li><b>Read-only readers stop at the commit point too</b>: the writer sends each copy its commit
 * point (the highest seq up to which every mutation sent to it is settled, a failed PUT holding it
 * until undone) with its sequenced mutations and, when idle, in a COMMIT on the next tick; the
 * server keeps it (journaled) and READ and GET on read handles show no message above it. So a
 * reader of one copy (a {@code ReadOnlyReplica}, the OR-set log readers, browse) never sees a PUT
 * that is on that copy only, and sees an acknowledged one at most a tick after its ack
 * ({@code CommitPointReaderTest}).</li>
 * <li>A copy its server flags DAMAGED (journal records lost at recovery, see the queue flags in
 * kvs-protocol) is never taken as in sync, whatever its transaction number: at open, takeover or a
 * member's reopen it is NG and rebuilt from the intact copy (the rebuild's CLEAR ends the mark).
 * With no intact copy it is served with an ALARM event; with an intact one away, the open waits.
 * A read-only reader ({@code ReadOnlyReplica}) reads a damaged copy only when no intact one
 * qualifies, with an ALARM event ({@code DamagedCopyRebuildTest}).</li>
 * <li><b>Copy hygiene</b>: a copy isolated while the other copy was in sync is cleared on its node
 * (an empty queue stays, the trace of the open) once two copies are in sync again and its node is
 * up ({@code StaleCopies}); a copy given up in an ALARM is kept for the operator. Readers, the
 * OR-set log readers included, read only copies named by the newest record.</li>
 * <li>Exactly one outcome per call; futures never complete exceptionally.</li>
 * <li><b>A node is declared lost for its silence only</b>: any answer on a path (not only a PING's)
 * proves it alive, and so does the node draining bytes of a frame still being sent on it (a mail
 * near the 64 MiB limit takes seconds, and the PING waits behind it: {@code LargeMessageTwoCopiesTest});
 * a request fails over only when its copy has been silent for {@code requestTimeout} since it was
 * sent (at most 3 request timeouts in all, counted from the last byte of ours the node drained); and
 * the client's own standstills do not count as silence ({@code ClientBehindTest}). A node killed, frozen or cut off
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
 * with a node down leaves it there when the node comes back). An open that this rule will refuse
 * (no record heard, not every node heard) fails right after its probe, before it fences: retried,
 * its fences would leave a trace one epoch higher each time, which on a node that lost its disk
 * could pass the real owner's epoch and get that owner fenced when it rebuilds its copy there
 * ({@code HeardNodes.whyNotNew}; {@code ReplicationScenarioTest}). Left: a queue created with a node
 * down that came back after its writer closed, later one copy's node down and the other wiped while
 * that node is heard:
 * it is created again, and the open that later sees both creations raises an ALARM naming the copy
 * of the other one ({@code MembershipRecord.incarnation}); its messages are not merged.</li>
 * <li>A node that lost its disk answers with a new store id ({@code store.id} in its data
 * directory). Records name the store of every node their writer heard ({@link
 * org.jameskvs.replication.MembershipRecord} witnesses); an open counts a node towards "all but one
 * node heard" only if it holds the newest record heard or that record names the store it answers
 * with now, else it waits for the nodes not heard ({@code OpenProcedure.newestRecordSurely}). So a
 * node wiped while the other copy's node is down is waited out, never opened as the queue. Left:
 * both copies' nodes losing their disks (the mail is gone; an open that hears every node takes the
 * newest record left), a disk restored from a backup with its {@code store.id} (it claims a store
 * that kept everything: delete that file when restoring). Epochs known to the wiped disk only (a
 * takeover while one of two nodes was down fenced only the other one, which then lost its disk):
 * an open that sees a node of the newest record answer from another store fences again
 * {@code Epochs.LOST_DISK_MARGIN} above that record's epoch ({@code OpenProcedure}), so a writer
 * still running with such an epoch is fenced by the new owner; and the node that was down, which
 * that writer's open never fenced and which may hold the only whole copy, is rebuilt only after its
 * source's store was checked ({@code QueueReplica.unfencedAtOpen}; simulation seed 5836). An open
 * while the wiped node is still down hears only the node that was down and takes an epoch below the
 * lost one; the writer of the lost epoch had its only copy on the wiped disk and acknowledges
 * nothing more, and its OPEN on that node, back, names the store it knew ({@code Member.store}): the
 * node refuses it ({@code STORE_CHANGED}) instead of taking the higher epoch on its new store and
 * fencing the new owner there (seed 37736; {@code LostTakeoverEpochTest}). An open's fence names
 * the store its probe saw ({@code OpenProbe.store}); a node wiped in between refuses it
 * ({@code OpenProbe.lostDiskAtFence}) and is not waited for as an in-sync copy that may still
 * answer: its copy is gone. The
 * simulation does not inject a second data loss before a wiped copy is rebuilt; other faults while
 * it is not rebuilt it does, and on two nodes the wipe of the only copy while the other node is
 * down with a whole copy, takeovers since that node went down included.</li>
 * <li>The position space still changes (a reader rescans from 0) at a reclaim (the copies found
 * again may lack a suffix the reader saw: its seqs may be given again), when the new read copy is
 * unsequenced or its seqs diverged (a SEQ_GAP renumbered a suffix, or the only in-sync copy was
 * re-based on its own last seq), and for read-only readers at every switch (below). A queue whose
 * positions were counted by PUTs before (journal record layout 2 and older) keeps numbering from its
 * next position until a rebuild gives it its source's. A rebuild target must run this server
 * revision (positioned PUTs).</li>
 * <li>A failed PUT is undone on the copies only by the writer that saw it fail, once the queue can
 * write: a writer that stops first (closed, fenced, crashed, its process restarted) leaves it on the
 * copies that took it; the next writer's open takes what the copies hold as committed, so then it
 * and read-only readers read it. The commit point holds back what PUTs add, not what DELETE and
 * REPLACE change (a reader may see a message go, or its new state, before both copies have it).
 * A queue whose positions were counted by PUTs (journal record layout 2 and older), positions
 * above its seqs, is read without the commit point until a rebuild gives it its source's positions.
 * Servers must run this revision before writers send the commit point (an older server does not
 * know flag 0x0008).</li>
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
 * <li>A copy that missed mutations is brought up by its missing suffix only by the writer that saw
 * it leave (its node lost while the other copy stayed in sync), while that writer's log of it is
 * within {@code catchUpLogEntries} and the copy comes back on its own node with the (seq, digest)
 * the log expects; a new writer (restart, reclaim, takeover), a copy isolated for disagreeing, a
 * copy replaced on a third node, or a CLEAR in the suffix: rebuilt in full (CLEAR and copy). A rebuild keeps the source's order also when its first marker is answered
 * late (a STAT resent on the other path after mail was put meanwhile): the next pass re-appends
 * from the first message the target already held ({@code RebuildLateMarkerTest}).</li>
 * </ul>
 */
package org.jameskvs.replication;
