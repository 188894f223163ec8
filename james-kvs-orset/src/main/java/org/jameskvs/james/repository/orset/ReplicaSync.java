package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the {@link LocalReplica} up to date, one sync at a time (the sync lock, which G2 of the
 * {@link GarbageCollector} relies on: no log read overlaps its checks): lists the logs if due,
 * catches up with every one, then garbage collection (G1 and, if due, a G2/G3 round). Runs on the
 * caller's thread (syncOnAccess) or on a background tailer ({@link #startTailing}).
 */
final class ReplicaSync implements AutoCloseable {
    // The repository's log category (as before this class was split out of it).
    private static final Logger LOG = LoggerFactory.getLogger(OrSetMailRepository.class);

    private final NodeLogs logs;
    private final LogReader reader;
    private final GarbageCollector garbage;
    private final String ownLog;
    private final Object syncLock = new Object();
    private volatile ScheduledExecutorService tailer;

    ReplicaSync(NodeLogs logs, LogReader reader, GarbageCollector garbage, String ownLog) {
        this.logs = logs;
        this.reader = reader;
        this.garbage = garbage;
        this.ownLog = ownLog;
    }

    /**
     * One sync. {@code forceDiscovery}: list the logs now; {@code forceGc}: a full pass over every log
     * and a garbage collection round now.
     */
    void run(boolean forceDiscovery, boolean forceGc) {
        synchronized (syncLock) {
            logs.discoverIfDue(forceDiscovery);
            long now = System.nanoTime();
            reader.catchUpAll(now, forceGc);
            garbage.collectOwnAdds();
            garbage.roundIfDue(now, forceGc);
        }
    }

    /** Syncs in the background every {@code interval}. */
    synchronized void startTailing(Duration interval) {
        if (tailer != null) {
            return;
        }
        tailer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "orset-tail-" + ownLog);
            t.setDaemon(true);
            return t;
        });
        tailer.scheduleWithFixedDelay(() -> {
            try {
                run(false, false);
            } catch (RuntimeException e) {
                LOG.warn("OR-set repository {}: background sync failed", ownLog, e);
            }
        }, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stops tailing and releases the read handles (once no sync runs). */
    @Override
    public void close() {
        ScheduledExecutorService t = tailer;
        if (t != null) {
            t.shutdownNow();
        }
        synchronized (syncLock) {
            logs.close();
        }
    }
}
