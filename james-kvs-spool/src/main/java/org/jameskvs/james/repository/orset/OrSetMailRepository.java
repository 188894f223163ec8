package org.jameskvs.james.repository.orset;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import javax.inject.Inject;
import javax.mail.MessagingException;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepository;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.mailet.Mail;
import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A James mail repository written by every James node of a cluster at once, converging without
 * coordination: an add-wins observed-remove set ({@link OrSet}) whose operations are kept in one KVS
 * queue <i>per James node</i>, {@code <namespace>/repo/<path>#<nodeId>}.
 *
 * <ul>
 * <li><b>Writes</b>: a node appends to its own log only (one writer per queue, as the epoch fencing
 * requires): {@code store} = ADD(key, fresh tag, superseded tags observed for the key, mail),
 * {@code remove} = REMOVE(tags of the key observed here), {@code removeAll} = REMOVE(every observed
 * tag), split into operations of at most {@link #MAX_TAGS_PER_REMOVE} tags. KVS message id = the
 * operation's tag ({@link Tag#asId()}); body = {@link OpCodec}. An operation is applied to the local
 * state once the KVS acknowledged it (read-your-writes).</li>
 * <li><b>Reads</b>: the state is the merge of every node's log. Logs are found by listing the queues
 * with the repository's prefix and read incrementally (READ from the last position). The node's own
 * log is read through its write handle; the others through {@link LogCopies}: read-only handles on
 * every copy (on the replicated backend, every KVS node holding a queue of that name; the union is
 * applied). With {@code syncOnAccess} (default) every call first catches up with all logs;
 * {@link #startTailing} does it in the background instead.</li>
 * <li><b>Order does not matter</b>: {@link OrSet} keeps removed tags, so operations commute and are
 * idempotent: reading the logs in any interleaving, reading copies whose positions differ, or
 * rescanning a log from 0 all converge. Positions are per copy: a copy is re-read from 0 when the
 * {@link ReadResult#positionSpace()} of its answers changes (the replicated copy serving the own
 * log's reads changed), and every log is re-read from 0 every {@code rescanInterval} (anti-entropy;
 * after a rebuild new messages may precede old ones). Such a re-read from 0 to the end of every copy
 * is a <i>full pass</i>.</li>
 * <li><b>Retrieve</b> returns the mail of the winning live add of the key ({@link OrSet#WINNER}),
 * fetched by GET from the log holding it; the in-memory state holds only references.</li>
 * </ul>
 *
 * <h2>Garbage collection</h2>
 * One fact drives it: <b>an ADD leaves its log only after its tag was removed</b> (rule G1), and a
 * tag is observed (so can be named by a REMOVE, a store's superseded tags or a tombstone) only after
 * its ADD was in the log. So "the ADD of t is gone from its writer's log" is a durable, shared
 * proof that t is removed, which no node has to announce and no clock has to bound. The rules:
 * <ol>
 * <li><b>G1 (own ADDs)</b>: once a node sees one of its own ADDs removed, it deletes the ADD from its
 * log (or, if it superseded tags, replaces it atomically by a REMOVE of those tags, same id). The
 * REMOVE that removed it stays in a log until G3, so every replica ends with the tag removed.</li>
 * <li><b>G2 (tombstones)</b>: a replica forgets the tombstone of t once the ADD of t is <i>gone</i>:
 * GETs issued after the tombstone was recorded find it on no copy of its writer's log (every node
 * of the group answered; an unreachable node or a copy still holding it keeps the tombstone). A
 * tombstone only exists to block a later delivery of that ADD; a gone ADD is never delivered again
 * (tags are never reused, and log reads and this check run one after the other under the sync
 * lock, so no block read before the check is applied after it).</li>
 * <li><b>G3 (REMOVE records)</b>: a node deletes one of its own REMOVE records (and the REMOVEs left by
 * G1) once every tag it names is neither live nor a tombstone in its own state, i.e. G2 found
 * every one of those ADDs gone. A replica that never applied those ADDs will never see them; one
 * that applied an ADD but not yet any REMOVE of it learns the removal from G4.</li>
 * <li><b>G4 (live adds whose ADD is gone)</b>: at the end of a complete full pass of a log (every
 * copy read from 0 to its end without error or change of position space, every node of the group
 * answered), a tag that was live here from that log when the pass started but whose ADD the pass
 * did not see is dropped (no tombstone needed: by G1 it was removed, and it can't come back). A
 * full pass sees every message present on a copy from its start to its end (new messages are
 * appended behind the cursor, a replacing PUT moves one to the tail).</li>
 * </ol>
 * Hence: after a remove, the REMOVE record, the ADD and every tombstone of it disappear once every
 * node's repository has synced a few times, and logs shrink to the live ADDs. No node has to know
 * the others, and a crashed node stalls nothing but the collection of its own records.
 * <b>Add-wins is kept</b>: GC only ever drops a tag whose ADD its own writer deleted, which G1 does
 * only for a tag that some REMOVE (or superseding store) named, i.e. observed; a concurrent add has
 * a fresh tag that no REMOVE named. <b>Assumption</b> (as in the replication layer): at most one
 * failure at a time, i.e. the in-sync copy of a log is on a node that answers; a stale copy left on
 * a former member only delays G2/G4 (it still holds the ADD, so the ADD is not "gone").
 * {@code gcInterval} (default 30 s) spaces the rounds of G2/G3 checks (at most {@link #GC_BATCH}
 * GETs each); G4 runs at the end of every full pass ({@code rescanInterval}, default 5 min).
 * {@link #collectGarbageNow()} runs a full pass and a round at once.
 */
public class OrSetMailRepository implements MailRepository, AutoCloseable {
    public static final String NODE_SEPARATOR = "#";
    public static final int MAX_TAGS_PER_REMOVE = 2000;
    /** Most tags a garbage collection round checks (GETs issued at once). */
    public static final int GC_BATCH = 256;
    private static final int MAX_BLOCKS_PER_CATCH_UP = 1_000_000;
    private static final int NO_SPACE = Integer.MIN_VALUE;
    private static final Logger LOG = LoggerFactory.getLogger(OrSetMailRepository.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Tunables. */
    public record Options(boolean syncOnAccess, Duration discoveryInterval, Duration rescanInterval, Duration gcInterval) {
        public Options(boolean syncOnAccess, Duration discoveryInterval, Duration rescanInterval) {
            this(syncOnAccess, discoveryInterval, rescanInterval, Duration.ofSeconds(30));
        }

        public static Options defaults() {
            return new Options(true, Duration.ofSeconds(1), Duration.ofMinutes(5), Duration.ofSeconds(30));
        }
    }

    /** Where the mail of a live add is: the log queue and the message id. */
    record MailRef(String log, Tag tag) {
    }

    private final KvsQueues queues;
    private final LogCopies copies;
    private final KvsSpoolConfiguration configuration;
    private final String prefix;
    private final String ownLog;
    private final String nodeId;
    private final long session;
    private final AtomicLong counter = new AtomicLong();
    private final Options options;
    private final LongSupplier millis;

    private final OrSet<MailRef> set = new OrSet<>();
    private final Object stateLock = new Object();
    private final Object syncLock = new Object();
    private final Map<String, Cursor> cursors = new ConcurrentHashMap<>();
    /** Own ADDs still in the own log: tag -> superseded tags (for G1). */
    private final Map<Tag, Set<Tag>> ownAdds = new ConcurrentHashMap<>();
    private final Set<Tag> collecting = ConcurrentHashMap.newKeySet();
    /** Own REMOVE records still in the own log: id -> removed tags (for G3). */
    private final Map<Tag, Set<Tag>> ownRemoves = new ConcurrentHashMap<>();
    private final Set<Tag> deleting = ConcurrentHashMap.newKeySet();
    private long lastDiscovery = Long.MIN_VALUE;
    private long lastGcRound = Long.MIN_VALUE;
    private final AtomicLong collected = new AtomicLong();
    private volatile ScheduledExecutorService tailer;

    /** As James instantiates it: the node id is {@code ownerName} of kvs-spool.properties (must differ per node). */
    @Inject
    public OrSetMailRepository(KvsQueues queues, KvsQueueOpener opener, MailRepositoryUrl url) {
        this(queues, opener, url, queues.configuration().ownerName(), Options.defaults(), System::currentTimeMillis);
    }

    public OrSetMailRepository(KvsQueues queues, KvsQueueOpener opener, MailRepositoryUrl url, String nodeId,
                               Options options, LongSupplier millis) {
        if (!Tag.validNode(nodeId)) {
            throw new IllegalArgumentException("invalid node id for an OR-set repository: " + nodeId);
        }
        this.queues = queues;
        this.configuration = queues.configuration();
        this.copies = new LogCopies(opener, configuration, options.discoveryInterval());
        this.prefix = configuration.mailRepositoryPrefix() + url.getPath().asString() + NODE_SEPARATOR;
        this.nodeId = nodeId;
        this.ownLog = prefix + nodeId;
        this.session = RANDOM.nextLong() & Long.MAX_VALUE;
        this.options = options;
        this.millis = millis;
    }

    public String nodeId() {
        return nodeId;
    }

    /** Catches up in the background every {@code interval} (besides or instead of syncOnAccess). */
    public synchronized void startTailing(Duration interval) {
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
                sync();
            } catch (RuntimeException e) {
                LOG.warn("OR-set repository {}: background sync failed", ownLog, e);
            }
        }, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    // ---------------------------------------------------------------- MailRepository

    @Override
    public long size() throws MessagingException {
        syncIfAsked();
        synchronized (stateLock) {
            return set.size();
        }
    }

    @Override
    public MailKey store(Mail mail) throws MessagingException {
        MailKey key = MailKey.forMail(mail);
        byte[] mailBytes = MailCodec.encode(mail);
        syncIfAsked();
        Tag tag = nextTag();
        OrSetOp.Add<MailRef> add;
        synchronized (stateLock) {
            add = set.prepareAdd(key.asString(), tag, millis.getAsLong(), new MailRef(ownLog, tag));
        }
        byte[] body = OpCodec.encodeAdd(add, mailBytes);
        Ack ack = call(() -> Futures.await(own().put(idOf(tag), 0, 0, stateOf(OpCodec.ADD, key.asString()), body),
            configuration.requestTimeout(), "put " + ownLog));
        if (!ack.isOk()) {
            // Outcome unknown on TIMEOUT: if it was written, reading the own log applies it later.
            throw new MessagingException("Cannot store " + key.asString() + " in " + ownLog + ": " + ack.status() + " " + ack.reason());
        }
        ownAdds.put(tag, add.supersedes());
        synchronized (stateLock) {
            set.apply(add);
        }
        return key;
    }

    @Override
    public Iterator<MailKey> list() throws MessagingException {
        syncIfAsked();
        List<String> keys;
        synchronized (stateLock) {
            keys = set.keys();
        }
        return keys.stream().map(MailKey::new).iterator();
    }

    @Override
    public Mail retrieve(MailKey key) throws MessagingException {
        syncIfAsked();
        for (int attempt = 0; attempt < 3; attempt++) {
            Optional<OrSet.Entry<MailRef>> winner;
            synchronized (stateLock) {
                winner = set.winner(key.asString());
            }
            if (winner.isEmpty()) {
                return null;
            }
            MailRef ref = winner.get().payload();
            byte[] mail = fetchMail(ref);
            if (mail != null) {
                return MailCodec.decode(mail, ref.log() + "/" + ref.tag().asId());
            }
            // Collected meanwhile: its removal is in some log; catch up and look again.
            sync();
        }
        return null;
    }

    /** The mail bytes of a live add, from any copy of its log; null if no copy has it. */
    private byte[] fetchMail(MailRef ref) throws MessagingException {
        List<KvsQueue> handles = new ArrayList<>();
        if (ref.log().equals(ownLog)) {
            handles.add(own());
        } else {
            Cursor cursor = cursors.get(ref.log());
            if (cursor == null) {
                throw new MessagingException("No read handle on " + ref.log());
            }
            cursor.copies.values().forEach(c -> handles.add(c.handle));
        }
        MessagingException failure = null;
        for (KvsQueue handle : handles) {
            GetResult result = call(() -> Futures.await(handle.get(idOf(ref.tag())), configuration.requestTimeout(), "get " + ref.log()));
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

    @Override
    public void remove(MailKey key) throws MessagingException {
        syncIfAsked();
        Optional<OrSetOp.Remove<MailRef>> remove;
        synchronized (stateLock) {
            remove = set.prepareRemove(key.asString(), nextTag());
        }
        if (remove.isEmpty()) {
            // Not seen here: maybe stored on a node whose log this one has not discovered yet.
            syncNow(true);
            synchronized (stateLock) {
                remove = set.prepareRemove(key.asString(), nextTag());
            }
        }
        if (remove.isPresent()) {
            write(remove.get(), key.asString());
        }
    }

    @Override
    public void removeAll() throws MessagingException {
        syncIfAsked();
        List<OrSetOp.Remove<MailRef>> removes;
        synchronized (stateLock) {
            removes = set.prepareRemoveAll(this::nextTag, MAX_TAGS_PER_REMOVE);
        }
        for (OrSetOp.Remove<MailRef> remove : removes) {
            write(remove, "");
        }
    }

    private void write(OrSetOp.Remove<MailRef> remove, String key) throws MessagingException {
        Ack ack = call(() -> Futures.await(own().put(idOf(remove.id()), 0, 0, stateOf(OpCodec.REMOVE, key), OpCodec.encodeRemove(remove)),
            configuration.requestTimeout(), "put " + ownLog));
        if (!ack.isOk()) {
            throw new MessagingException("Cannot remove from " + ownLog + ": " + ack.status() + " " + ack.reason());
        }
        synchronized (stateLock) {
            set.apply(remove);
        }
        ownRemoves.put(remove.id(), remove.tags());
        collectOwnAdds();
    }

    // ---------------------------------------------------------------- reading the logs

    /** Catches up with every node's log (discovering new nodes at most every discoveryInterval). */
    public void sync() {
        sync(false, false);
    }

    /**
     * A full pass over every log and a garbage collection round, now (tests, admin). Returns the
     * number of records, tombstones and stale live adds collected so far by this object.
     */
    public long collectGarbageNow() {
        sync(true, true);
        awaitOwnDeletes();
        return collected.get();
    }

    private void syncNow(boolean forceDiscovery) throws MessagingException {
        try {
            sync(forceDiscovery, false);
        } catch (RuntimeException e) {
            throw new MessagingException("Cannot read the logs of " + prefix, e);
        }
    }

    private void sync(boolean forceDiscovery, boolean forceGc) {
        synchronized (syncLock) {
            if (forceDiscovery) {
                lastDiscovery = Long.MIN_VALUE;
            }
            discoverIfDue();
            long now = System.nanoTime();
            for (Cursor cursor : cursors.values()) {
                boolean fullPass = forceGc || now - cursor.lastRescan >= options.rescanInterval().toNanos();
                if (fullPass) {
                    cursor.lastRescan = now;
                }
                try {
                    catchUp(cursor, fullPass);
                } catch (RuntimeException e) {
                    LOG.warn("OR-set repository {}: cannot read {} (will retry)", ownLog, cursor.name, e);
                }
            }
            collectOwnAdds();
            if (forceGc || lastGcRound == Long.MIN_VALUE || now - lastGcRound >= options.gcInterval().toNanos()) {
                lastGcRound = now;
                try {
                    gcRound();
                } catch (RuntimeException e) {
                    LOG.warn("OR-set repository {}: garbage collection round failed (will retry)", ownLog, e);
                }
            }
        }
    }

    private void syncIfAsked() throws MessagingException {
        if (options.syncOnAccess()) {
            syncNow(false);
        }
    }

    private void discoverIfDue() {
        long now = System.nanoTime();
        if (lastDiscovery != Long.MIN_VALUE && now - lastDiscovery < options.discoveryInterval().toNanos()) {
            return;
        }
        lastDiscovery = now;
        List<String> names;
        try {
            names = queues.existingNames(prefix);
        } catch (RuntimeException e) {
            LOG.warn("OR-set repository {}: cannot list queues", ownLog, e);
            names = List.of();
        }
        for (String name : names) {
            String node = name.substring(prefix.length());
            if (cursors.containsKey(name) || node.contains(NODE_SEPARATOR) || !Tag.validNode(node)) {
                continue;
            }
            cursors.put(name, new Cursor(name, name.equals(ownLog)));
        }
        for (Cursor cursor : cursors.values()) {
            if (!cursor.own) {
                openCopies(cursor);
            }
        }
    }

    /** Opens the copies of a log not open yet; notes the nodes without a copy. */
    private void openCopies(Cursor cursor) {
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
                cursor.copies.put(node, new Copy(node, opened.queue()));
                cursor.absent.remove(node);
            } else if (opened.status() == Status.NO_SUCH_QUEUE) {
                cursor.absent.add(node);
            } else {
                cursor.absent.remove(node);
                LOG.debug("OR-set repository {}: cannot open {} on {}: {} {}", ownLog, cursor.name, node, opened.status(), opened.reason());
            }
        });
    }

    private void catchUp(Cursor cursor, boolean fullPass) {
        if (cursor.own) {
            Copy copy = cursor.copies.computeIfAbsent(LogCopies.SINGLE, node -> new Copy(node, own()));
            copy.handle = own(); // the write handle of KvsQueues (re-opened after a takeover)
        }
        Pass pass = null;
        if (fullPass) {
            pass = new Pass();
            synchronized (stateLock) {
                for (OrSet.Entry<MailRef> entry : set.entries()) {
                    if (entry.payload().log().equals(cursor.name)) {
                        pass.liveAtStart.add(entry.tag());
                    }
                }
            }
            for (Copy copy : cursor.copies.values()) {
                copy.position = 0;
            }
        }
        RuntimeException failure = null;
        for (Copy copy : List.copyOf(cursor.copies.values())) {
            try {
                readToEnd(cursor, copy, pass);
            } catch (RuntimeException e) {
                failure = e;
                if (pass != null) {
                    pass.clean = false;
                }
            }
        }
        if (pass != null && pass.clean && (cursor.own || cursor.complete(copies.nodes()))) {
            // G4: a tag live here from this log at the start whose ADD the whole pass did not see.
            synchronized (stateLock) {
                for (Tag tag : pass.liveAtStart) {
                    if (!pass.seen.contains(tag) && set.dropLive(tag)) {
                        collected.incrementAndGet();
                        LOG.debug("OR-set repository {}: {} is gone from {}: dropped", ownLog, tag, cursor.name);
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void readToEnd(Cursor cursor, Copy copy, Pass pass) {
        for (int blocks = 0; blocks < MAX_BLOCKS_PER_CATCH_UP; blocks++) {
            ReadResult result = Futures.await(copy.handle.read(copy.position, configuration.readBlockSize(), configuration.readBlockBytes(), 0),
                configuration.requestTimeout(), "read " + cursor.name);
            if (!result.isOk()) {
                throw new IllegalStateException("READ failed on " + cursor.name + " (" + copy.node + "): " + result.status() + " " + result.reason());
            }
            if (result.positionSpace() != copy.space) {
                boolean first = copy.space == NO_SPACE;
                copy.space = result.positionSpace();
                if (!first && copy.position != 0) {
                    // Another copy serves the reads: positions are its own, read it again from 0.
                    copy.position = 0;
                    if (pass != null) {
                        pass.clean = false;
                    }
                    continue;
                }
            }
            List<OrSetOp<MailRef>> ops = new ArrayList<>(result.messages().size());
            for (StoredMessage message : result.messages()) {
                if (LogCopies.isReserved(message.id())) {
                    continue;
                }
                try {
                    ops.add(OpCodec.decode(message.body(), (tag, mail) -> new MailRef(cursor.name, tag)));
                } catch (RuntimeException e) {
                    LOG.error("OR-set repository {}: skipping undecodable message at {} of {}", ownLog, message.position(), cursor.name, e);
                }
            }
            synchronized (stateLock) {
                for (OrSetOp<MailRef> op : ops) {
                    set.apply(op);
                    if (pass != null && op instanceof OrSetOp.Add<MailRef> add) {
                        pass.seen.add(add.tag());
                    }
                }
            }
            if (cursor.own) {
                for (OrSetOp<MailRef> op : ops) {
                    if (op instanceof OrSetOp.Add<MailRef> add) {
                        ownAdds.putIfAbsent(add.tag(), add.supersedes());
                    } else if (op instanceof OrSetOp.Remove<MailRef> remove) {
                        ownRemoves.putIfAbsent(remove.id(), remove.tags());
                    }
                }
            }
            copy.position = Math.max(copy.position, result.nextPosition());
            if (result.messages().isEmpty()) {
                return;
            }
        }
        throw new IllegalStateException("READ of " + cursor.name + " did not reach its end in " + MAX_BLOCKS_PER_CATCH_UP + " blocks");
    }

    // ---------------------------------------------------------------- garbage collection

    /** G1: deletes (or shrinks to their REMOVE part) the own ADDs known to be removed. Best effort, async. */
    private void collectOwnAdds() {
        List<Map.Entry<Tag, Set<Tag>>> removed = new ArrayList<>();
        synchronized (stateLock) {
            for (Map.Entry<Tag, Set<Tag>> e : ownAdds.entrySet()) {
                if (set.isRemoved(e.getKey()) && collecting.add(e.getKey())) {
                    removed.add(e);
                }
            }
        }
        for (Map.Entry<Tag, Set<Tag>> e : removed) {
            Tag tag = e.getKey();
            Set<Tag> supersedes = e.getValue();
            var done = supersedes.isEmpty()
                ? own().delete(idOf(tag))
                : own().putReplacing(idOf(tag), 0, 0, stateOf(OpCodec.REMOVE, ""), OpCodec.encodeRemove(new OrSetOp.Remove<>(tag, supersedes)));
            done.whenComplete((ack, error) -> {
                if (error == null && (ack.isOk() || ack.status() == Status.NOT_FOUND)) {
                    if (!supersedes.isEmpty() && ack.isOk()) {
                        ownRemoves.put(tag, supersedes);
                    }
                    ownAdds.remove(tag);
                    collected.incrementAndGet();
                }
                collecting.remove(tag);
            });
        }
    }

    /** G2 then G3 (see the class comment). Runs under the sync lock, after the logs were read. */
    private void gcRound() {
        List<Tag> tombstones;
        synchronized (stateLock) {
            tombstones = set.removedTags().stream().limit(GC_BATCH).toList();
        }
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
                    present = Futures.await(presence, configuration.requestTimeout(), "get " + e.getKey());
                } catch (RuntimeException ex) {
                    present = null;
                }
                if (present == null || present) {
                    gone = false;
                }
            }
            if (gone) {
                synchronized (stateLock) {
                    if (set.forgetTombstone(e.getKey())) {
                        forgotten++;
                    }
                }
            }
        }
        collected.addAndGet(forgotten);
        // G3: own REMOVE records all of whose tags are collected here.
        List<Tag> deletable = new ArrayList<>();
        synchronized (stateLock) {
            for (Map.Entry<Tag, Set<Tag>> e : ownRemoves.entrySet()) {
                if (e.getValue().stream().noneMatch(t -> set.isRemoved(t) || set.isLive(t)) && deleting.add(e.getKey())) {
                    deletable.add(e.getKey());
                }
            }
        }
        for (Tag id : deletable) {
            own().delete(idOf(id)).whenComplete((ack, error) -> {
                if (error == null && (ack.isOk() || ack.status() == Status.NOT_FOUND)) {
                    ownRemoves.remove(id);
                    collected.incrementAndGet();
                }
                deleting.remove(id);
            });
        }
    }

    /**
     * GETs of {@code tag}'s ADD on every copy of its writer's log: each completes with whether that
     * copy still holds the ADD (null: unknown). Null when the log's copies are not all known.
     */
    private List<CompletableFuture<Boolean>> presenceChecks(Tag tag) {
        String log = prefix + tag.node();
        Cursor cursor = cursors.get(log);
        List<KvsQueue> handles = new ArrayList<>();
        if (log.equals(ownLog)) {
            handles.add(own());
        } else {
            if (cursor == null || !cursor.complete(copies.nodes())) {
                return null;
            }
            cursor.copies.values().forEach(c -> handles.add(c.handle));
        }
        List<CompletableFuture<Boolean>> out = new ArrayList<>();
        for (KvsQueue handle : handles) {
            out.add(handle.get(idOf(tag)).thenApply(result -> {
                if (result.isOk()) {
                    return OpCodec.mailOf(result.message().body(), tag) != null;
                }
                return result.status() == Status.NOT_FOUND ? Boolean.FALSE : null;
            }));
        }
        return out;
    }

    private void awaitOwnDeletes() {
        long deadline = System.nanoTime() + configuration.requestTimeout().toNanos();
        while ((!collecting.isEmpty() || !deleting.isEmpty()) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    /** The live keys and tags as this node sees them (tests: convergence). */
    public Map<String, Set<Tag>> liveTags() {
        synchronized (stateLock) {
            return set.liveTags();
        }
    }

    /** True if the key is present in the local state, without reading the logs. */
    public boolean containsLocally(String key) {
        synchronized (stateLock) {
            return set.contains(key);
        }
    }

    public int tombstones() {
        synchronized (stateLock) {
            return set.removedCount();
        }
    }

    /** Records (ADD and REMOVE) of this node still in its own log, as far as this object knows. */
    public int ownRecords() {
        return ownAdds.size() + ownRemoves.size();
    }

    private KvsQueue own() {
        return queues.get(ownLog);
    }

    private Tag nextTag() {
        return new Tag(nodeId, session, counter.incrementAndGet());
    }

    private static byte[] idOf(Tag tag) {
        return tag.asId().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] stateOf(int type, String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(k.length, 200);
        byte[] state = new byte[n + 1];
        state[0] = (byte) type;
        System.arraycopy(k, 0, state, 1, n);
        return state;
    }

    private interface KvsCall<T> {
        T run();
    }

    private static <T> T call(KvsCall<T> call) throws MessagingException {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw new MessagingException("KVS request failed", e);
        }
    }

    /** Stops tailing and releases the read handles (the own write handle belongs to {@link KvsQueues}). */
    @Override
    public void close() {
        ScheduledExecutorService t = tailer;
        if (t != null) {
            t.shutdownNow();
        }
        synchronized (syncLock) {
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

    /** One copy of a log and where reading it goes on. */
    private static final class Copy {
        final String node;
        volatile KvsQueue handle;
        long position;
        int space = NO_SPACE;

        Copy(String node, KvsQueue handle) {
            this.node = node;
            this.handle = handle;
        }
    }

    /** A log: its copies (the own log: the write handle) and the nodes known to hold none. */
    private static final class Cursor {
        final String name;
        final boolean own;
        final Map<String, Copy> copies = new ConcurrentHashMap<>();
        final Set<String> absent = ConcurrentHashMap.newKeySet();
        long lastRescan = System.nanoTime();

        Cursor(String name, boolean own) {
            this.name = name;
            this.own = own;
        }

        /** Every node answered: it holds a copy (open here) or none. */
        boolean complete(List<String> nodes) {
            if (copies.isEmpty()) {
                return false;
            }
            for (String node : nodes) {
                if (!copies.containsKey(node) && !absent.contains(node)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A full pass over a log: the tags live from it at the start, and the ADDs it saw. */
    private static final class Pass {
        final Set<Tag> liveAtStart = new HashSet<>();
        final Set<Tag> seen = new HashSet<>();
        boolean clean = true;
    }
}
