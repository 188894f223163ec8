package org.jameskvs.delivery;

import java.time.Duration;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lane limits held across James nodes through one KVS server, with no new server operation: the
 * server's rule that a queue has at most one write handle (a second write OPEN at the same epoch is
 * refused {@code QUEUE_LOCKED}; a handle dies with its connection) makes an empty queue a lock.
 *
 * <ul>
 * <li><b>Connection slots.</b> Lane {@code L} with limit {@code c} has the lock queues
 * {@code L/slot-0} .. {@code L/slot-(c-1)}; a node opens a connection to the lane's destination only
 * while it holds one (write handle open), and closes the handle with the connection. So the lane's
 * connections across every node never exceed {@code c}, however the nodes' demand is spread. A node
 * that dies or loses its KVS link loses its slots with its connection; its SMTP connections then
 * close at their next hand-back (see {@link Slot#held()}), so an overlap lasts at most one transaction.
 * <li><b>Live nodes.</b> Each node holds one member lock {@code <prefix>nodes/<i>}, {@code i <
 * maxNodes}; every {@code refresh} it probes the others (an OPEN that is refused is a live node;
 * one that succeeds is closed at once). {@link #rateShare()} is {@code 1/n} among {@code n} live nodes.
 * <li><b>Rate shares by demand.</b> A node that has mail for a rate-limited lane ({@link #demand}: a
 * mail paced to go out now or later) holds the lane's demand lock {@code L/active-<i>}, {@code i} its
 * member number, taken at its first demand without waiting, and gives it back once the lane has had no
 * demand here for two refreshes. Every refresh, for each lane it has demand for, a node probes the demand
 * locks of the live members and uses {@code 1/(1 + k)} of the lane's rate, {@code k} the other nodes
 * holding the lane's demand lock: a node with no mail for a lane holds no part of its rate back. Before
 * the first such count a lane's share is the even {@code 1/n}. A node that gains demand is counted by
 * the others at their next refresh, so for up to one refresh the lane may go above its rate (at most
 * by the newcomer's share); a probe that meets another node's probe counts one node too many for one
 * refresh (a lower share: below the rate, never above).
 * </ul>
 * Every lock is opened at epoch 1 (a higher epoch would take a held lock over). Without the server the
 * lane opens no new connection (limits are kept, delivery waits) and the rate share stays as last
 * seen.
 */
public final class KvsSharedLimits implements SharedLimits {
    private static final Logger LOGGER = LoggerFactory.getLogger(KvsSharedLimits.class);
    private static final long LOCK_EPOCH = 1;
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);
    /** Wait before probing again a member lock newly seen held (far longer than a probe holds one). */
    private static final Duration CONFIRM = Duration.ofMillis(50);

    private final KvsClient client;
    private final String owner;
    private final String membersPrefix;
    private final int maxNodes;
    private final boolean ownsClient;
    /** Slot numbers this node holds, per lane: not probed again while held. */
    private final Map<String, BitSet> held = new HashMap<>();
    /** Member locks seen held by other nodes at the last count (touched by the refresher only). */
    private final BitSet seenLive = new BitSet();
    private final ScheduledExecutorService refresher;
    private volatile double share = 1;
    /** Lanes this node has had demand for (rate-limited ones), by name. */
    private final Map<String, LaneDemand> demands = new ConcurrentHashMap<>();
    /** A lane with no demand for this long gives its demand lock back. */
    private final long idleNanos;
    private volatile boolean closed;
    private KvsQueue membership;
    private int memberIndex = -1;

    /**
     * Takes a member lock and starts probing the others every {@code refresh}.
     *
     * @param ownsClient close the client with this object
     */
    public KvsSharedLimits(KvsClient client, boolean ownsClient, String owner, String membersPrefix, int maxNodes, Duration refresh) {
        if (maxNodes < 1) {
            throw new IllegalArgumentException("sharedLimitsMaxNodes must be at least 1, was " + maxNodes);
        }
        this.client = client;
        this.ownsClient = ownsClient;
        this.owner = owner;
        this.membersPrefix = membersPrefix;
        this.maxNodes = maxNodes;
        this.idleNanos = 2 * refresh.toNanos();
        join();
        refreshShare(); // before any delivery: a joining node starts with its share, not the whole rate
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lane-shared-limits");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refreshShare, refresh.toMillis(), refresh.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Shared limits on the first KVS server of the spool's configuration (its own connection: the
     * spool's replicated connection takes locks over, and these must not be), owned by this node's
     * {@code ownerName}.
     */
    static KvsSharedLimits connect(KvsSpoolConfiguration spool, LaneDeliveryConfig config) {
        String server = lockServer(spool);
        int colon = server.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("sharedLimits: KVS server '" + server + "' is not host:port");
        }
        java.util.Properties p = spool.properties();
        KvsClient client = KvsClient.connect(KvsClientConfig.builder()
            .host(server.substring(0, colon))
            .port(Integer.parseInt(server.substring(colon + 1)))
            .credentials(spool.replicated() ? p.getProperty("replication.user", spool.user()) : spool.user(),
                spool.replicated() ? p.getProperty("replication.password", spool.password()) : spool.password())
            .tls(spool.tls())
            .requestTimeout(spool.requestTimeout())
            .build());
        return new KvsSharedLimits(client, true, spool.ownerName(), config.queuePrefix() + "nodes/",
            config.sharedLimitsMaxNodes(), config.sharedLimitsRefresh());
    }

    /**
     * The server holding the locks: {@code servers}' first, or with replication the active address of
     * the first of {@code replication.nodes} (every James node reads the same file, so all agree).
     */
    private static String lockServer(KvsSpoolConfiguration spool) {
        if (!spool.replicated()) {
            return spool.servers().get(0);
        }
        String first = spool.properties().getProperty("replication.nodes").split(",")[0].strip();
        String active = spool.properties().getProperty("replication.node." + first + ".active");
        if (active == null || active.isBlank()) {
            throw new IllegalArgumentException("sharedLimits: replication.node." + first + ".active is not set");
        }
        return active.strip();
    }

    private synchronized void join() {
        for (int i = 0; i < maxNodes; i++) {
            KvsQueue lock = tryLock(membersPrefix + i);
            if (lock != null) {
                membership = lock;
                memberIndex = i;
                LOGGER.info("Lane limits shared as member {} of at most {} ({})", i, maxNodes, membersPrefix);
                return;
            }
        }
        throw new IllegalStateException("Lane limits: all " + maxNodes + " member locks " + membersPrefix
            + "0.. are held: more James nodes than sharedLimitsMaxNodes, or the KVS server is unreachable");
    }

    /**
     * Counts the live members (this one and every member lock another node holds). A lock newly seen
     * held is probed again after CONFIRM: another node's probe holds a free lock for one round trip
     * only (two nodes probing the same free lock at once would each count a third node), a member
     * holds it for good.
     */
    void refreshShare() {
        try {
            int live = 1;
            for (int i = 0; i < maxNodes; i++) {
                if (i == memberIndex) {
                    continue;
                }
                Boolean held = memberHeld(i);
                if (held == Boolean.TRUE && !seenLive.get(i)) {
                    Thread.sleep(CONFIRM.toMillis());
                    held = memberHeld(i);
                }
                if (held == null) {
                    return; // no answer: keep the share as last seen
                }
                seenLive.set(i, held);
                live += held ? 1 : 0;
            }
            double next = 1.0 / live;
            if (next != share) {
                LOGGER.info("Lane limits: {} live James node(s), {} member lock(s) of others held", live, live - 1);
            }
            share = next;
            demands.values().forEach(this::refreshDemand);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOGGER.warn("Lane limits: cannot count the live nodes", e);
        }
    }

    /**
     * A lane this node has had demand for: gives its demand lock back when idle, else counts the live
     * members holding theirs and sets the lane's share (refresher thread).
     */
    private void refreshDemand(LaneDemand demand) {
        if (System.nanoTime() - demand.until > idleNanos) {
            demand.releaseLock();
            demand.counted = false;
            return;
        }
        demand.takeLock();
        int others = 0;
        for (int i = seenLive.nextSetBit(0); i >= 0; i = seenLive.nextSetBit(i + 1)) {
            Boolean held = lockHeld(demand.lane + "/active-" + i);
            if (held == null) {
                return; // no answer: keep the share as last seen
            }
            others += held ? 1 : 0;
        }
        double next = 1.0 / (1 + others);
        if (!demand.counted || next != demand.share) {
            LOGGER.info("Lane limits: lane {} has mail on {} node(s) here included; this node uses 1/{} of its rate",
                demand.lane, 1 + others, 1 + others);
        }
        demand.share = next;
        demand.counted = true;
    }

    @Override
    public void demand(Lane lane, Duration wait) {
        long until = System.nanoTime() + wait.toNanos();
        LaneDemand demand = demands.computeIfAbsent(lane.name(), LaneDemand::new);
        if (until - demand.until > 0) {
            demand.until = until;
        }
        demand.takeLock();
    }

    @Override
    public double rateShare(Lane lane) {
        LaneDemand demand = demands.get(lane.name());
        return demand == null || !demand.counted ? share : demand.share;
    }

    /**
     * The live nodes found with mail for {@code lane} (this one included) at this node's last count, or
     * 0 when this node has had no demand for the lane since (its share is then the even one).
     */
    public int nodesWithDemand(Lane lane) {
        LaneDemand demand = demands.get(lane.name());
        return demand == null || !demand.counted ? 0 : (int) Math.round(1 / demand.share);
    }

    /** Whether another node holds member lock {@code i}; null when the server gave no clear answer. */
    private Boolean memberHeld(int i) {
        return lockHeld(membersPrefix + i);
    }

    /** Whether another node holds lock {@code name}; null when the server gave no clear answer. */
    private Boolean lockHeld(String name) {
        OpenResult probe = open(name);
        if (probe == null) {
            return null;
        }
        if (probe.isOk()) {
            probe.queue().close();
            return false;
        }
        return probe.status() == Status.QUEUE_LOCKED ? Boolean.TRUE : null;
    }

    @Override
    public Slot tryTake(Lane lane, int concurrency) {
        for (int k = 0; k < concurrency; k++) {
            synchronized (this) {
                BitSet mine = held.computeIfAbsent(lane.name(), l -> new BitSet());
                if (mine.get(k)) {
                    continue;
                }
                mine.set(k); // reserved while the OPEN is out, so no other thread of this node tries it
            }
            KvsQueue lock = tryLock(lane.name() + "/slot-" + k);
            if (lock != null) {
                return new KvsSlot(lane.name(), k, lock);
            }
            synchronized (this) {
                held.get(lane.name()).clear(k);
            }
        }
        return null;
    }

    /** The lock's write handle, or null when another node holds it or the server did not answer OK. */
    private KvsQueue tryLock(String name) {
        OpenResult result = open(name);
        if (result != null && result.isOk()) {
            return result.queue();
        }
        if (result != null && result.status() != Status.QUEUE_LOCKED) {
            LOGGER.warn("Lane limits: lock {} not taken: {} {}", name, result.status(), result.reason());
        }
        return null;
    }

    private OpenResult open(String name) {
        CompletableFuture<OpenResult> open = client.open(name, OpenOptions.writer(owner, LOCK_EPOCH));
        try {
            return open.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public double rateShare() {
        return share;
    }

    /** Leaves the members (closing twice is harmless: the spool closes what it was given). */
    @Override
    public void close() {
        closed = true;
        refresher.shutdownNow();
        demands.values().forEach(LaneDemand::releaseLock);
        synchronized (this) {
            if (membership == null) {
                return;
            }
            membership.close();
            membership = null;
        }
        if (ownsClient) {
            client.close();
        }
    }

    /** This node's demand for one lane: until when, its demand lock, and the lane's share by demand. */
    private final class LaneDemand {
        private final String lane;
        /** nanoTime until which the lane has a mail here (written by delivery threads, racy max: harmless). */
        private volatile long until = System.nanoTime();
        private volatile double share = 1;
        /** Whether {@link #share} was counted since the lane last had demand. */
        private volatile boolean counted;
        private KvsQueue lock;
        private boolean taking;

        LaneDemand(String lane) {
            this.lane = lane;
        }

        /** Sends the OPEN of this node's demand lock unless held or under way; never waits for it. */
        void takeLock() {
            synchronized (this) {
                if (lock != null || taking || closed || memberIndex < 0) {
                    return;
                }
                taking = true;
            }
            client.open(lane + "/active-" + memberIndex, OpenOptions.writer(owner, LOCK_EPOCH)).whenComplete((result, error) -> {
                KvsQueue taken = error == null && result.isOk() ? result.queue() : null;
                boolean keep;
                synchronized (this) {
                    taking = false;
                    keep = taken != null && !closed && System.nanoTime() - until <= idleNanos;
                    if (keep) {
                        lock = taken;
                    }
                }
                if (taken != null && !keep) {
                    taken.close();
                }
            });
        }

        void releaseLock() {
            KvsQueue held;
            synchronized (this) {
                held = lock;
                lock = null;
            }
            if (held != null) {
                held.close();
            }
        }
    }

    private final class KvsSlot implements Slot {
        /** How long a check that the lock is still held is trusted. */
        private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
        private final String lane;
        private final int index;
        private final KvsQueue lock;
        private long checkedAt = System.nanoTime();
        private boolean released;

        KvsSlot(String lane, int index, KvsQueue lock) {
            this.lane = lane;
            this.index = index;
            this.lock = lock;
        }

        /**
         * The client is connected and, at most a second ago, a STAT on the lock's handle was answered
         * OK (after a reconnect the client re-opens the handle; if another node took the lock meanwhile
         * that re-open fails and so does the STAT).
         */
        @Override
        public synchronized boolean held() {
            if (released || !client.isConnected()) {
                return false;
            }
            if (System.nanoTime() - checkedAt < CHECK_NANOS) {
                return true;
            }
            try {
                boolean ok = lock.stat().get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).status() == Status.OK;
                checkedAt = System.nanoTime();
                return ok;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (Exception e) {
                return false;
            }
        }

        @Override
        public void release() {
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
            }
            lock.close(); // CLOSE goes out before any later OPEN of this client, so a retake sees it free
            synchronized (KvsSharedLimits.this) {
                held.get(lane).clear(index);
            }
        }
    }
}
