package org.jameskvs.james.queue;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.james.queue.api.MailQueue.MailQueueItem;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Fencing;
import org.jameskvs.james.Futures;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * Feeds the dequeuers of one James queue. One thread per queue reads READ blocks, highest priority
 * level first, into a small per-level buffer and hands messages out only against downstream demand:
 * whatever the backlog, James holds at most {@code readAheadWindow} unread mails per level plus the
 * ones being processed.
 *
 * <p>Reads use {@code readyBefore = now}, so delayed mail is skipped by the server and never blocks
 * ready mail behind it. Delayed mail sits at a position the cursor has passed; when it becomes due
 * (STAT's {@code earliestNotBefore}), after a flush, or after a removal, the level is rescanned from
 * its start. Messages handed out and not yet done are "in flight": rescans skip them, so no mail is
 * handed out twice. Several subscribers share the reader; each message goes to one of them.
 *
 * <p>A message leaves "in flight" only on the loop thread, between two READs, never while a READ is
 * outstanding: a READ's answer can predate a delete that was acknowledged before the reader looks
 * at it (the servers took the READ's snapshot first), so the answer may still hold the message
 * of a mail that is done. Forgotten between READs, a done mail is gone from every later answer
 * (its delete was acknowledged by every copy before the next READ is sent), and in-flight skips it
 * in the answers before.
 *
 * <p>Once the node is fenced ({@link Fencing}) the reader hands out nothing more.
 */
final class MailQueueReader implements AutoCloseable {
    private static final Logger LOGGER = LoggerFactory.getLogger(MailQueueReader.class);

    /** Turns a stored message of a level into the item handed to James (decode + decorate). */
    interface ItemFactory {
        MailQueueItem create(int level, StoredMessage message) throws Exception;
    }

    private static final class Cursor {
        long position;
        final ArrayDeque<StoredMessage> buffer = new ArrayDeque<>();
        boolean caughtUp;
        boolean rescan;
        long scanStartedAt = Long.MIN_VALUE;
        long rescanAt = Long.MAX_VALUE;
        /** The copy whose positions {@link #position} counts in (see ReadResult#positionSpace). */
        int positionSpace = NO_SPACE_YET;
        /**
         * The level may hold delayed mail, so going idle asks STAT for its earliest due time. False
         * only after a STAT found none and no delayed mail was enqueued since (this James is the
         * queue's only writer); STAT is asked anyway once per idle poll interval.
         */
        boolean mayHoldDelayed = true;
        long lastStatAt = Long.MIN_VALUE;
    }

    private static final int NO_SPACE_YET = Integer.MIN_VALUE;

    private final String queueName;
    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final Fencing fencing;
    private final ItemFactory itemFactory;
    /** Ids handed out and not yet forgotten (loop thread only). */
    private final Set<String> inFlight = new HashSet<>();
    /** Ids of mail done since the loop last looked: forgotten by the loop before its next READ. */
    private final Queue<String> done = new ConcurrentLinkedQueue<>();
    private final List<FluxSink<MailQueueItem>> sinks = new CopyOnWriteArrayList<>();
    private final AtomicBoolean drainPending = new AtomicBoolean();
    /** Levels (bit per level) enqueued to since the last drain, and those of them that got delayed mail. */
    private final AtomicInteger enqueuedLevels = new AtomicInteger();
    private final AtomicInteger delayedLevels = new AtomicInteger();
    private final ScheduledExecutorService loop;
    // State below is only touched on the loop thread.
    private final Map<Integer, Cursor> cursors = new HashMap<>();
    private ScheduledFuture<?> wakeUp;
    private long wakeUpAt = Long.MAX_VALUE;
    private int nextSink;
    private boolean stoppedByFencing;

    MailQueueReader(String queueName, PriorityLevels levels, KvsSpoolConfiguration configuration, Fencing fencing,
                    ItemFactory itemFactory) {
        this.queueName = queueName;
        this.levels = levels;
        this.configuration = configuration;
        this.fencing = fencing;
        this.itemFactory = itemFactory;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "kvs-mailqueue-reader-" + queueName);
            thread.setDaemon(true);
            return thread;
        });
        // A wake-up replaced by an earlier one is cancelled: removed at once, not left queued until its
        // time (the task queue's array grows to its largest size and never shrinks).
        executor.setRemoveOnCancelPolicy(true);
        this.loop = executor;
    }

    Flux<MailQueueItem> subscribe() {
        return Flux.create(sink -> {
            sinks.add(sink);
            sink.onDispose(() -> sinks.remove(sink));
            sink.onRequest(n -> signal());
        });
    }

    /**
     * A mail was enqueued (or re-enqueued) at {@code level}: read that level's tail again. Only sets a
     * bit and asks for one drain: a burst of enqueues while the loop waits for a READ costs one task,
     * not one per mail (the loop's task queue array would otherwise grow to the burst and stay so).
     */
    void onEnqueued(int level, boolean delayed) {
        int bit = 1 << level;
        if (delayed) {
            delayedLevels.accumulateAndGet(bit, MailQueueReader::or);
        }
        enqueuedLevels.accumulateAndGet(bit, MailQueueReader::or);
        signal();
    }

    /** Applies the enqueue notifications received since the last drain (loop thread). */
    private void applyEnqueued() {
        int enqueued = enqueuedLevels.getAndSet(0);
        int delayed = delayedLevels.getAndSet(0);
        for (int level = MailPriority.LOWEST; level <= MailPriority.HIGHEST; level++) {
            int bit = 1 << level;
            if (((enqueued | delayed) & bit) != 0) {
                Cursor cursor = cursor(level);
                cursor.caughtUp = false;
                cursor.mayHoldDelayed |= (delayed & bit) != 0;
            }
        }
    }

    private static int or(int a, int b) {
        return a | b;
    }

    /**
     * Mail handed out is done (deleted, or handed back to be read again): the loop forgets it before
     * its next READ. Not at once: a READ the loop is waiting for may have been answered before the
     * delete, and must still find the id in flight.
     */
    void release(String id) {
        done.add(id);
    }

    /** Loop thread, with no READ outstanding. */
    private void forgetDone() {
        for (String id = done.poll(); id != null; id = done.poll()) {
            inFlight.remove(id);
        }
    }

    /** Content changed behind the cursors (flush, remove, clear): drop buffers and rescan every level. */
    void rescanAll() {
        execute(() -> cursors.values().forEach(cursor -> {
            cursor.buffer.clear();
            cursor.rescan = true;
            cursor.caughtUp = false;
            cursor.mayHoldDelayed = true;
        }));
    }

    private void execute(Runnable onLoop) {
        try {
            loop.execute(() -> {
                onLoop.run();
                drain();
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOGGER.debug("Reader of {} is closed", queueName);
        }
    }

    private void signal() {
        if (drainPending.compareAndSet(false, true)) {
            try {
                loop.execute(this::drain);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                LOGGER.debug("Reader of {} is closed", queueName);
            }
        }
    }

    private void drain() {
        drainPending.set(false);
        applyEnqueued();
        try {
            while (true) {
                if (stoppedByFencing()) {
                    return;
                }
                FluxSink<MailQueueItem> sink = nextSinkWithDemand();
                if (sink == null) {
                    return;
                }
                Next next = nextMessage();
                if (next == null) {
                    scheduleWakeUp();
                    return;
                }
                String id = MessageIds.asString(next.message.id());
                if (!inFlight.add(id)) {
                    continue;
                }
                MailQueueItem item;
                try {
                    item = itemFactory.create(next.level, next.message);
                } catch (Exception e) {
                    // Left in flight on purpose: a message we cannot decode is not retried in a loop.
                    LOGGER.error("Queue {}: cannot decode KVS message {}; it stays in the queue, skipped", queueName, id, e);
                    continue;
                }
                sink.next(item);
            }
        } catch (RuntimeException e) {
            if (stoppedByFencing()) {
                return; // the READ met the other writer
            }
            LOGGER.warn("Queue {}: reading failed, retrying in {}", queueName, configuration.idlePollInterval(), e);
            scheduleAt(System.currentTimeMillis() + configuration.idlePollInterval().toMillis());
        }
    }

    /**
     * A fenced node hands out no more mail: another writer holds the queues, and this node could not
     * delete what it delivered. No wake-up is scheduled either: the reader stays idle until James stops.
     */
    private boolean stoppedByFencing() {
        if (!fencing.isFenced()) {
            return false;
        }
        if (!stoppedByFencing) {
            stoppedByFencing = true;
            // Mail read ahead belongs to the queue's new owner: dropped, never handed out here.
            cursors.values().forEach(cursor -> cursor.buffer.clear());
            LOGGER.warn("Queue {}: no more mail handed out, this James node is fenced; read-ahead dropped", queueName);
        }
        return true;
    }

    private FluxSink<MailQueueItem> nextSinkWithDemand() {
        int count = sinks.size();
        for (int i = 0; i < count; i++) {
            int index = Math.floorMod(nextSink++, count);
            FluxSink<MailQueueItem> sink;
            try {
                sink = sinks.get(index);
            } catch (IndexOutOfBoundsException e) {
                return null;
            }
            if (!sink.isCancelled() && sink.requestedFromDownstream() > 0) {
                return sink;
            }
        }
        return null;
    }

    private record Next(int level, StoredMessage message) {
    }

    private Next nextMessage() {
        levels.discoverIfNeeded(); // a queue created while the store could not answer: its levels now
        for (int level : levels.levels()) {
            Cursor cursor = cursor(level);
            while (cursor.buffer.isEmpty() && !cursor.caughtUp) {
                fetch(level, cursor);
            }
            StoredMessage message = cursor.buffer.poll();
            if (message != null) {
                return new Next(level, message);
            }
        }
        return null;
    }

    private void fetch(int level, Cursor cursor) {
        forgetDone();
        long now = System.currentTimeMillis();
        if (cursor.rescan) {
            cursor.rescan = false;
            cursor.buffer.clear();
            cursor.position = 0;
        }
        if (cursor.position == 0) {
            cursor.scanStartedAt = now;
        }
        int count = Math.min(configuration.readBlockSize(), configuration.readAheadWindow());
        long from = cursor.position;
        ReadResult result = Futures.await(
            levels.queue(level).read(from, count, configuration.readBlockBytes(), now),
            configuration.requestTimeout(), "read " + queueName);
        if (!result.isOk()) {
            cursor.caughtUp = true;
            throw new IllegalStateException("READ on " + queueName + "@p" + level + ": " + result.status() + " " + result.reason());
        }
        if (result.positionSpace() != cursor.positionSpace) {
            boolean first = cursor.positionSpace == NO_SPACE_YET;
            cursor.positionSpace = result.positionSpace();
            if (!first) {
                // Another copy serves reads and numbers its messages differently: our position means
                // nothing there. Unread buffered mail is dropped and found again by a scan from 0;
                // mail handed out is in flight and skipped, so nothing is handed out twice.
                LOGGER.info("Queue {}@p{}: the copy serving reads changed; rescanning from the start", queueName, level);
                cursor.buffer.clear();
                cursor.scanStartedAt = now;
                cursor.position = 0;
                if (from != 0) {
                    return;
                }
            }
        }
        long bodies = 0;
        for (StoredMessage message : result.messages()) {
            bodies += message.body().length;
            if (!inFlight.contains(MessageIds.asString(message.id()))) {
                cursor.buffer.add(message);
            }
        }
        cursor.position = Math.max(cursor.position, result.nextPosition());
        // Fewer messages than asked means the server reached the tail, unless the byte limit stopped
        // it: that takes a next message bigger than what is left of the limit, so with less than half
        // of it used we call the level caught up and save the empty READ that would say so. (Should a
        // mail over half of readBlockBytes follow, it is read at the next enqueue or idle poll.)
        if (result.messages().isEmpty()
            || result.messages().size() < count && bodies < configuration.readBlockBytes() / 2) {
            cursor.caughtUp = true;
        }
    }

    /**
     * Nothing is ready: wake up when the earliest delayed mail becomes due, and in any case after the
     * idle poll interval (reads the tails again).
     *
     * <p>STAT gives the smallest notBefore of the level's delayed mail, including mail already due
     * and handed out (in flight). Such mail hides the due time of the next delayed mail: while it is
     * there, the level is rescanned every idle poll interval instead (the rescan skips in-flight mail).
     */
    private void scheduleWakeUp() {
        long now = System.currentTimeMillis();
        long at = now + configuration.idlePollInterval().toMillis();
        for (int level : levels.levels()) {
            Cursor cursor = cursor(level);
            if (!cursor.mayHoldDelayed && now - cursor.lastStatAt < configuration.idlePollInterval().toMillis()) {
                continue; // no delayed mail here: its STAT would say so again
            }
            QueueStat stat = Futures.await(levels.queue(level).stat(), configuration.requestTimeout(), "stat " + queueName);
            cursor.lastStatAt = now;
            cursor.rescanAt = Long.MAX_VALUE;
            boolean delayed = stat.isOk() && stat.size() > 0 && stat.earliestNotBefore() != Long.MAX_VALUE;
            cursor.mayHoldDelayed = delayed || !stat.isOk();
            if (delayed) {
                cursor.rescanAt = stat.earliestNotBefore() > cursor.scanStartedAt ? stat.earliestNotBefore() : at;
                at = Math.min(at, cursor.rescanAt);
            }
        }
        scheduleAt(at);
    }

    private void scheduleAt(long at) {
        if (wakeUp != null && !wakeUp.isDone() && wakeUpAt <= at) {
            return;
        }
        if (wakeUp != null) {
            wakeUp.cancel(false);
        }
        wakeUpAt = at;
        long delay = Math.max(0, at - System.currentTimeMillis());
        try {
            wakeUp = loop.schedule(this::onWakeUp, delay, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOGGER.debug("Reader of {} is closed", queueName);
        }
    }

    private void onWakeUp() {
        wakeUpAt = Long.MAX_VALUE;
        long now = System.currentTimeMillis();
        for (Cursor cursor : cursors.values()) {
            cursor.caughtUp = false;
            if (cursor.rescanAt <= now) {
                cursor.rescanAt = Long.MAX_VALUE;
                cursor.rescan = true;
            }
        }
        drain();
    }

    private Cursor cursor(int level) {
        return cursors.computeIfAbsent(level, any -> new Cursor());
    }

    @Override
    public void close() {
        loop.shutdownNow();
        sinks.forEach(FluxSink::complete);
        sinks.clear();
    }
}
