package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import javax.mail.MessagingException;

import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logs of the repository as known here, one per James node: found by listing the queues with
 * the repository's prefix ({@code <namespace>/repo/<path>#}), each with a {@link LogCursor} and
 * read handles on its copies. The own log is read through its write handle; the others through
 * {@link LogCopies}.
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

    /** Every node of the group answered for {@code cursor}'s log: it holds a copy (open here) or none. */
    boolean complete(LogCursor cursor) {
        return cursor.complete(copies.nodes());
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
        }
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

    /** Handles on the copies of {@code log} open here (the own log: its write handle); null if the log is unknown. */
    List<KvsQueue> openCopiesOf(String log) {
        if (log.equals(ownLog.name())) {
            return List.of(ownLog.handle());
        }
        LogCursor cursor = cursors.get(log);
        return cursor == null ? null : handles(cursor);
    }

    /** Handles on every copy of {@code log}; null unless every node answered for it ({@link #complete}). */
    List<KvsQueue> everyCopyOf(String log) {
        if (log.equals(ownLog.name())) {
            return List.of(ownLog.handle());
        }
        LogCursor cursor = cursors.get(log);
        return cursor == null || !complete(cursor) ? null : handles(cursor);
    }

    private static List<KvsQueue> handles(LogCursor cursor) {
        List<KvsQueue> handles = new ArrayList<>();
        cursor.copies.values().forEach(c -> handles.add(c.handle));
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
