package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import javax.mail.MessagingException;

import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.QueueStat;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.replication.InSyncCopies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logs of the repository as known here, one per James node: found by listing the queues with
 * the repository's prefix ({@code <namespace>/repo/<path>#}), each with a {@link LogCursor} and
 * read handles on its copies. The own log is read through its write handle; the others through
 * {@link LogCopies}, on the copies the log's newest replication record names in sync
 * ({@link #refreshMembers}): readers and garbage collection use the same copies.
 */
final class NodeLogs implements AutoCloseable {
    // The repository's log category (as before this class was split out of it).
    private static final Logger LOG = LoggerFactory.getLogger(OrSetMailRepository.class);

    private final KvsQueues queues;
    private final LogCopies copies;
    private final OwnLog ownLog;
    private final KvsSpoolConfiguration configuration;
    private final String prefix;
    private final Duration discoveryInterval;
    private final Map<String, LogCursor> cursors = new ConcurrentHashMap<>();
    private long lastDiscovery = Long.MIN_VALUE;

    NodeLogs(KvsQueues queues, LogCopies copies, OwnLog ownLog, String prefix, Duration discoveryInterval) {
        this.queues = queues;
        this.copies = copies;
        this.ownLog = ownLog;
        this.configuration = queues.configuration();
        this.prefix = prefix;
        this.discoveryInterval = discoveryInterval;
    }

    /** The log written by James node {@code node}. */
    String logOf(String node) {
        return prefix + node;
    }

    Collection<LogCursor> cursors() {
        return cursors.values();
    }

    /** Every in-sync copy of {@code cursor}'s log is known and open here: what none holds is gone. */
    boolean complete(LogCursor cursor) {
        return cursor.complete();
    }

    /**
     * Lists the logs (at most every discoveryInterval, unless {@code force}) and opens the copies
     * of the other nodes' logs not open yet.
     */
    void discoverIfDue(boolean force) {
        if (force) {
            lastDiscovery = Long.MIN_VALUE;
        }
        long now = System.nanoTime();
        if (lastDiscovery != Long.MIN_VALUE && now - lastDiscovery < discoveryInterval.toNanos()) {
            return;
        }
        lastDiscovery = now;
        List<String> names;
        try {
            names = queues.existingNames(prefix);
        } catch (RuntimeException e) {
            LOG.warn("OR-set repository {}: cannot list queues", ownLog.name(), e);
            names = List.of();
        }
        for (String name : names) {
            String node = name.substring(prefix.length());
            if (cursors.containsKey(name) || node.contains(OrSetMailRepository.NODE_SEPARATOR) || !Tag.validNode(node)) {
                continue;
            }
            cursors.put(name, new LogCursor(name, name.equals(ownLog.name())));
        }
        for (LogCursor cursor : cursors.values()) {
            if (!cursor.own) {
                openCopies(cursor);
            }
            refreshMembers(cursor, true);
        }
    }

    /** {@link #refreshMembers} for every log, now: before a garbage collection round concludes from absence. */
    void refreshAllMembers() {
        for (LogCursor cursor : cursors.values()) {
            refreshMembers(cursor, true);
        }
    }

    /**
     * Reads the replication record on every open copy of the log (at most every discoveryInterval,
     * unless {@code force}) and makes the copies its newest version names in sync the ones read
     * ({@link InSyncCopies}). A copy that (re)joins is read from position 0: it may have been rebuilt,
     * renumbering its positions. When the records cannot tell (too few nodes answered), the members
     * stay as they were but are no longer {@code complete}: reads go on, conclusions from absence
     * wait. A copy its server flags DAMAGED is not read while an intact one qualifies; with none,
     * the damaged ones are, with an ALARM line, and not {@code complete}. The own log and a single
     * server: the one copy there is (the client logs an ALARM when it is damaged).
     */
    void refreshMembers(LogCursor cursor, boolean force) {
        if (cursor.own || !copies.replicated()) {
            cursor.members = Set.copyOf(cursor.copies.keySet());
            cursor.membersComplete = !cursor.copies.isEmpty();
            return;
        }
        long now = System.nanoTime();
        if (!force && cursor.members != null && now - cursor.membersAt < discoveryInterval.toNanos()) {
            return;
        }
        Map<String, CompletableFuture<GetResult>> gets = new HashMap<>();
        Map<String, CompletableFuture<QueueStat>> stats = new HashMap<>();
        cursor.copies.forEach((node, copy) -> {
            gets.put(node, copy.handle.get(InSyncCopies.recordId()));
            stats.put(node, copy.handle.stat()); // its DAMAGED flag
        });
        Map<String, byte[]> holders = new HashMap<>();
        int answered = cursor.absent.size();
        for (Map.Entry<String, CompletableFuture<GetResult>> e : gets.entrySet()) {
            GetResult r;
            try {
                r = Futures.await(e.getValue(), configuration.requestTimeout(), "get the record of " + cursor.name);
            } catch (RuntimeException ex) {
                continue; // unreachable: not an answer
            }
            if (r.isOk() && r.message() != null) {
                holders.put(e.getKey(), r.message().state());
                answered++;
            } else if (r.status() == Status.NOT_FOUND) {
                holders.put(e.getKey(), null);
                answered++;
            }
        }
        InSyncCopies.Choice choice = InSyncCopies.choose(holders, answered, copies.nodes().size());
        cursor.membersAt = now;
        if (choice == null) {
            cursor.membersComplete = false;
            return;
        }
        Set<String> damaged = damagedCopies(cursor, stats);
        choice = InSyncCopies.preferIntact(choice, damaged);
        boolean readingDamaged = choice.nodes().stream().anyMatch(damaged::contains);
        if (readingDamaged && !cursor.readingDamaged) {
            LOG.warn("ALARM OR-set repository {}: {} is read on DAMAGED copies {} (no intact copy): they may lack"
                + " operations or hold collected ones; no garbage collection concludes from them", ownLog.name(),
                cursor.name, choice.nodes());
        }
        cursor.readingDamaged = readingDamaged;
        Set<String> before = cursor.members;
        for (String node : choice.nodes()) {
            LogCursor.Copy copy = cursor.copies.get(node);
            if (copy != null && (before == null || !before.contains(node))) {
                copy.position = 0;
                copy.space = LogCursor.Copy.NO_SPACE;
            }
        }
        if (before != null && !before.equals(choice.nodes())) {
            LOG.info("OR-set repository {}: {} is now read on {} (was {})", ownLog.name(), cursor.name, choice.nodes(), before);
        }
        cursor.members = choice.nodes();
        cursor.membersComplete = choice.complete();
    }

    /** The copies whose server flags them DAMAGED (a copy that did not answer its STAT: not known damaged). */
    private Set<String> damagedCopies(LogCursor cursor, Map<String, CompletableFuture<QueueStat>> stats) {
        Set<String> damaged = new HashSet<>();
        stats.forEach((node, future) -> {
            try {
                QueueStat st = Futures.await(future, configuration.requestTimeout(), "stat " + cursor.name);
                if (st.isOk() && st.damaged()) {
                    damaged.add(node);
                }
            } catch (RuntimeException unreachable) {
                // not an answer: its record's GET did not count either
            }
        });
        return damaged;
    }

        /** Opens the copies of a log not open yet; notes the nodes without a copy. */
    private void openCopies(LogCursor cursor) {
        Map<String, CompletableFuture<OpenResult>> opening = new HashMap<>();
        for (String node : copies.nodes()) {
            if (!cursor.copies.containsKey(node)) {
                opening.put(node, copies.open(node, cursor.name));
            }
        }
        opening.forEach((node, future) -> {
            OpenResult opened;
            try {
                opened = Futures.await(future, configuration.requestTimeout(), "open " + cursor.name + " on " + node);
            } catch (RuntimeException e) {
                cursor.absent.remove(node);
                return;
            }
            if (opened.isOk()) {
                cursor.copies.put(node, new LogCursor.Copy(node, opened.queue()));
                cursor.absent.remove(node);
            } else if (opened.status() == Status.NO_SUCH_QUEUE) {
                cursor.absent.add(node);
            } else {
                cursor.absent.remove(node);
                LOG.debug("OR-set repository {}: cannot open {} on {}: {} {}", ownLog.name(), cursor.name, node, opened.status(), opened.reason());
            }
        });
    }

    /** Handles on the in-sync copies of {@code log} open here (the own log: its write handle); null if the log is unknown. */
    List<KvsQueue> openCopiesOf(String log) {
        if (log.equals(ownLog.name())) {
            return List.of(ownLog.handle());
        }
        LogCursor cursor = cursors.get(log);
        return cursor == null ? null : handles(cursor);
    }

    /** Handles on every in-sync copy of {@code log}; null unless they are all known and open ({@link #complete}). */
    List<KvsQueue> everyCopyOf(String log) {
        if (log.equals(ownLog.name())) {
            return List.of(ownLog.handle());
        }
        LogCursor cursor = cursors.get(log);
        return cursor == null || !complete(cursor) ? null : handles(cursor);
    }

    private static List<KvsQueue> handles(LogCursor cursor) {
        List<KvsQueue> handles = new ArrayList<>();
        cursor.memberCopies().forEach(c -> handles.add(c.handle));
        return handles;
    }

    /** The mail bytes of a live add, from any copy of its log; null if no copy has it. */
    byte[] fetchMail(MailRef ref) throws MessagingException {
        List<KvsQueue> handles = openCopiesOf(ref.log());
        if (handles == null) {
            throw new MessagingException("No read handle on " + ref.log());
        }
        MessagingException failure = null;
        for (KvsQueue handle : handles) {
            GetResult result = KvsCall.forJames(() -> Futures.await(handle.get(ref.tag().idBytes()), configuration.requestTimeout(), "get " + ref.log()));
            if (result.isOk()) {
                byte[] mail = OpCodec.mailOf(result.message().body(), ref.tag());
                if (mail != null) {
                    return mail;
                }
            } else if (result.status() != Status.NOT_FOUND) {
                failure = new MessagingException("Cannot retrieve " + ref.tag() + " from " + ref.log() + ": " + result.status());
            }
        }
        if (failure != null) {
            throw failure;
        }
        return null;
    }

    /** Releases the read handles (the own write handle belongs to {@link KvsQueues}); the logs are listed again on next use. */
    @Override
    public void close() {
        cursors.forEach((name, cursor) -> {
            if (!cursor.own) {
                cursor.copies.values().forEach(c -> c.handle.close());
            }
        });
        cursors.clear();
        lastDiscovery = Long.MIN_VALUE;
        copies.close();
    }
}
