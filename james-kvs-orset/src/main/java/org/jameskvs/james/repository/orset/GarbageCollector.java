package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jameskvs.client.KvsQueue;
import org.jameskvs.james.Futures;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection of the repository: the records in the logs and the tombstones and live adds in
 * the {@link LocalReplica} that can no longer matter.
 *
 * <p>One fact drives it: <b>an ADD leaves its log only after its tag was removed</b> (rule G1), and a
 * tag is observed (so can be named by a REMOVE, a store's superseded tags or a tombstone) only after
 * its ADD was in the log. So "the ADD of t is gone from its writer's log" is a durable, shared
 * proof that t is removed, which no node has to announce and no clock has to bound. The rules, each
 * explained at its code: G1 {@link #collectOwnAdds}, G2 {@link #forgetGoneTombstones}, G3
 * {@link #deleteOwnRemoves}, G4 {@link #afterFullPass}.
 *
 * <p>Hence: after a remove, the REMOVE record, the ADD and every tombstone of it disappear once every
 * node's repository has synced a few times, and logs shrink to the live ADDs. No node has to know
 * the others, and a crashed node stalls nothing but the collection of its own records.
 * <b>Add-wins is kept</b>: GC only ever drops a tag whose ADD its own writer deleted, which G1 does
 * only for a tag that some REMOVE (or superseding store) named, i.e. observed; a concurrent add has
 * a fresh tag that no REMOVE named. <b>Assumption</b> (as in the replication layer): at most one
 * failure at a time, i.e. the in-sync copy of a log is on a node that answers. The copies checked
 * are exactly the ones the readers read: those the log's newest replication record names in sync
 * ({@link NodeLogs#refreshMembers}); a stale copy left on a former member is neither read nor
 * checked (it would otherwise keep every tombstone of its ADDs alive forever).
 * {@code gcInterval} (default 30 s) spaces the rounds of G2/G3 checks (at most
 * {@link #MAX_CHECKS_PER_ROUND} GETs each); G4 runs at the end of every full pass
 * ({@code rescanInterval}, default 5 min). {@link OrSetMailRepository#collectGarbageNow()} runs a
 * full pass and a round at once.
 */
final class GarbageCollector {
    /** Most tags a garbage collection round checks (GETs issued at once). */
    static final int MAX_CHECKS_PER_ROUND = 256;
    // The repository's log category (as before this class was split out of it).
    private static final Logger LOG = LoggerFactory.getLogger(OrSetMailRepository.class);

    private final LocalReplica replica;
    private final OwnLog ownLog;
    private final NodeLogs logs;
    private final Duration requestTimeout;
    private final Duration gcInterval;
    /** Own ADDs being deleted (G1), own REMOVE records being deleted (G3): not asked for twice at once. */
    private final Set<Tag> collecting = ConcurrentHashMap.newKeySet();
    private final Set<Tag> deleting = ConcurrentHashMap.newKeySet();
    private final AtomicLong collected = new AtomicLong();
    private long lastRound = Long.MIN_VALUE;

    GarbageCollector(LocalReplica replica, OwnLog ownLog, NodeLogs logs, Duration requestTimeout, Duration gcInterval) {
        this.replica = replica;
        this.ownLog = ownLog;
        this.logs = logs;
        this.requestTimeout = requestTimeout;
        this.gcInterval = gcInterval;
    }

    /** Records, tombstones and stale live adds collected so far. */
    long collected() {
        return collected.get();
    }

    /**
     * <b>G1 (own ADDs)</b>: once a node sees one of its own ADDs removed, it deletes the ADD from its
     * log (or, if it superseded tags, replaces it atomically by a REMOVE of those tags, same id). The
     * REMOVE that removed it stays in a log until G3, so every replica ends with the tag removed.
     * Best effort, async.
     */
    void collectOwnAdds() {
        Map<Tag, Set<Tag>> adds = ownLog.addsInLog();
        Set<Tag> removed = replica.removedAmong(adds.keySet());
        List<Map.Entry<Tag, Set<Tag>>> collectable = new ArrayList<>();
        for (Map.Entry<Tag, Set<Tag>> e : adds.entrySet()) {
            if (removed.contains(e.getKey()) && collecting.add(e.getKey())) {
                collectable.add(e);
            }
        }
        for (Map.Entry<Tag, Set<Tag>> e : collectable) {
            Tag tag = e.getKey();
            ownLog.dropAdd(tag, e.getValue()).thenAccept(gone -> {
                if (gone) {
                    collected.incrementAndGet();
                }
                collecting.remove(tag);
            });
        }
    }

    /**
     * A round of G2 then G3, if {@code gcInterval} passed since the last (or if {@code force}). Runs
     * under the sync lock, after the logs were read (G2 relies on it).
     */
    void roundIfDue(long now, boolean force) {
        if (force || lastRound == Long.MIN_VALUE || now - lastRound >= gcInterval.toNanos()) {
            lastRound = now;
            try {
                logs.refreshAllMembers(); // the copies checked are the ones the readers use, as of now
                forgetGoneTombstones();
                deleteOwnRemoves();
            } catch (RuntimeException e) {
                LOG.warn("OR-set repository {}: garbage collection round failed (will retry)", ownLog.name(), e);
            }
        }
    }

    /**
     * <b>G2 (tombstones)</b>: a replica forgets the tombstone of t once the ADD of t is <i>gone</i>:
     * GETs issued after the tombstone was recorded find it on no copy of its writer's log (every node
     * of the group answered; an unreachable node or a copy still holding it keeps the tombstone). A
     * tombstone only exists to block a later delivery of that ADD; a gone ADD is never delivered again
     * (tags are never reused, and log reads and this check run one after the other under the sync
     * lock, so no block read before the check is applied after it).
     */
    private void forgetGoneTombstones() {
        List<Tag> tombstones = replica.tombstones(MAX_CHECKS_PER_ROUND);
        Map<Tag, List<CompletableFuture<Boolean>>> checks = new HashMap<>();
        for (Tag tag : tombstones) {
            List<CompletableFuture<Boolean>> presence = presenceChecks(tag);
            if (presence != null) {
                checks.put(tag, presence);
            }
        }
        int forgotten = 0;
        for (Map.Entry<Tag, List<CompletableFuture<Boolean>>> e : checks.entrySet()) {
            boolean gone = true;
            for (CompletableFuture<Boolean> presence : e.getValue()) {
                Boolean present;
                try {
                    present = Futures.await(presence, requestTimeout, "get " + e.getKey());
                } catch (RuntimeException ex) {
                    present = null;
                }
                if (present == null || present) {
                    gone = false;
                }
            }
            if (gone && replica.forgetTombstone(e.getKey())) {
                forgotten++;
            }
        }
        collected.addAndGet(forgotten);
    }

    /**
     * GETs of {@code tag}'s ADD on every copy of its writer's log: each completes with whether that
     * copy still holds the ADD (null: unknown). Null when the log's copies are not all known.
     */
    private List<CompletableFuture<Boolean>> presenceChecks(Tag tag) {
        List<KvsQueue> handles = logs.everyCopyOf(logs.logOf(tag.node()));
        if (handles == null) {
            return null;
        }
        List<CompletableFuture<Boolean>> out = new ArrayList<>();
        for (KvsQueue handle : handles) {
            out.add(handle.get(tag.idBytes()).thenApply(result -> {
                if (result.isOk()) {
                    return OpCodec.mailOf(result.message().body(), tag) != null;
                }
                return result.status() == Status.NOT_FOUND ? Boolean.FALSE : null;
            }));
        }
        return out;
    }

    /**
     * <b>G3 (REMOVE records)</b>: a node deletes one of its own REMOVE records (and the REMOVEs left by
     * G1) once every tag it names is neither live nor a tombstone in its own state, i.e. G2 found
     * every one of those ADDs gone. A replica that never applied those ADDs will never see them; one
     * that applied an ADD but not yet any REMOVE of it learns the removal from G4.
     */
    private void deleteOwnRemoves() {
        List<Tag> deletable = new ArrayList<>();
        for (Tag id : replica.recordsNamingNoKnownTag(ownLog.removesInLog())) {
            if (deleting.add(id)) {
                deletable.add(id);
            }
        }
        for (Tag id : deletable) {
            ownLog.dropRemove(id).thenAccept(gone -> {
                if (gone) {
                    collected.incrementAndGet();
                }
                deleting.remove(id);
            });
        }
    }

    /**
     * <b>G4 (live adds whose ADD is gone)</b>: at the end of a complete full pass of a log (every
     * copy read from 0 to its end without error or change of position space, every node of the group
     * answered), a tag that was live here from that log when the pass started but whose ADD the pass
     * did not see is dropped (no tombstone needed: by G1 it was removed, and it can't come back). A
     * full pass sees every message present on a copy from its start to its end (new messages are
     * appended behind the cursor, a replacing PUT moves one to the tail).
     */
    void afterFullPass(LogCursor cursor, FullPass pass) {
        if (!pass.clean || !(cursor.own || logs.complete(cursor))) {
            return;
        }
        for (Tag tag : replica.dropLive(pass.unseen())) {
            collected.incrementAndGet();
            LOG.debug("OR-set repository {}: {} is gone from {}: dropped", ownLog.name(), tag, cursor.name);
        }
    }

    /** Waits (at most a request timeout) for the deletes of own records under way. */
    void awaitOwnDeletes() {
        long deadline = System.nanoTime() + requestTimeout.toNanos();
        while ((!collecting.isEmpty() || !deleting.isEmpty()) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
