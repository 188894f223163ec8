package org.jameskvs.james.repository.orset;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
import org.jameskvs.replication.ReplicatedQueue;
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
 * with the repository's prefix and read incrementally (READ from the last position) through read
 * handles ({@link OpenOptions#reader()}); the node's own log through its write handle. With
 * {@code syncOnAccess} (default) every call first catches up with all logs; {@link #startTailing}
 * does it in the background instead.</li>
 * <li><b>Order does not matter</b>: {@link OrSet} keeps removed tags, so operations commute and are
 * idempotent: reading the logs in any interleaving, reading a copy whose positions differ, or
 * rescanning a log from 0 all converge. A rescan from 0 happens when the replicated copy serving
 * reads changes ({@link ReplicatedQueue#readCopyChanges()}) and every {@code rescanInterval}
 * (anti-entropy: positions are per copy, and after a rebuild new messages may precede old ones).</li>
 * <li><b>Retrieve</b> returns the mail of the winning live add of the key ({@link OrSet#WINNER}),
 * fetched by GET from the log holding it; the in-memory state holds only references.</li>
 * </ul>
 *
 * <p><b>Garbage collection.</b> (1) Done here: once a node sees that one of its own ADDs is removed,
 * it deletes that ADD from its log (or, if the ADD superseded other tags, replaces it atomically by a
 * REMOVE of those tags). This is safe without coordination: the REMOVE that removed it stays in a log,
 * so every replica, whatever it has read, ends with the tag removed. It reclaims the mail bytes.
 * (2) Not done: REMOVE records and in-memory tombstones ({@link OrSet#removedCount()}) still grow
 * (a few dozen bytes per removed mail). They can be dropped at causal stability: once the ADD is
 * gone from its log and every node has applied the REMOVE. Each node would publish, in its own log,
 * the position/version vector it has applied of every other log; a REMOVE whose tags' ADDs are
 * deleted and which every known node reports applied can be deleted by its writer, and the
 * tombstone dropped (a node joining later never sees the ADD, so needs no tombstone).
 */
public class OrSetMailRepository implements MailRepository, AutoCloseable {
    public static final String NODE_SEPARATOR = "#";
    public static final int MAX_TAGS_PER_REMOVE = 2000;
    private static final Logger LOG = LoggerFactory.getLogger(OrSetMailRepository.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Tunables. */
    public record Options(boolean syncOnAccess, Duration discoveryInterval, Duration rescanInterval) {
        public static Options defaults() {
            return new Options(true, Duration.ofSeconds(1), Duration.ofMinutes(5));
        }
    }

    /** Where the mail of a live add is: the log queue and the message id. */
    record MailRef(String log, Tag tag) {
    }

    private final KvsQueues queues;
    private final KvsQueueOpener opener;
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
    /** Own ADDs still in the own log: tag -> superseded tags (for garbage collection). */
    private final Map<Tag, Set<Tag>> ownAdds = new ConcurrentHashMap<>();
    private final Set<Tag> collecting = ConcurrentHashMap.newKeySet();
    private long lastDiscovery = Long.MIN_VALUE;
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
        this.opener = opener;
        this.configuration = queues.configuration();
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
            KvsQueue queue = ref.log().equals(ownLog) ? own() : cursorHandle(ref.log());
            GetResult result = call(() -> Futures.await(queue.get(idOf(ref.tag())), configuration.requestTimeout(), "get " + ref.log()));
            if (result.isOk()) {
                byte[] mail = OpCodec.mailOf(result.message().body(), ref.tag());
                if (mail != null) {
                    return MailCodec.decode(mail, ref.log() + "/" + ref.tag().asId());
                }
            } else if (result.status() != Status.NOT_FOUND) {
                throw new MessagingException("Cannot retrieve " + key.asString() + " from " + ref.log() + ": " + result.status());
            }
            // Collected meanwhile: its removal is in some log; catch up and look again.
            sync();
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
        collectGarbage();
    }

    // ---------------------------------------------------------------- reading the logs

    /** Catches up with every node's log (discovering new nodes at most every discoveryInterval). */
    public void sync() {
        sync(false);
    }

    private void syncNow(boolean forceDiscovery) throws MessagingException {
        try {
            sync(forceDiscovery);
        } catch (RuntimeException e) {
            throw new MessagingException("Cannot read the logs of " + prefix, e);
        }
    }

    private void sync(boolean forceDiscovery) {
        synchronized (syncLock) {
            if (forceDiscovery) {
                lastDiscovery = Long.MIN_VALUE;
            }
            discoverIfDue();
            for (Cursor cursor : cursors.values()) {
                try {
                    catchUp(cursor);
                } catch (RuntimeException e) {
                    LOG.warn("OR-set repository {}: cannot read {} (will retry)", ownLog, cursor.name, e);
                }
            }
        }
        collectGarbage();
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
            return;
        }
        for (String name : names) {
            String node = name.substring(prefix.length());
            if (cursors.containsKey(name) || node.contains(NODE_SEPARATOR) || !Tag.validNode(node)) {
                continue;
            }
            KvsQueue handle;
            if (name.equals(ownLog)) {
                handle = own();
            } else {
                OpenResult opened = Futures.await(opener.open(name, OpenOptions.reader()), configuration.requestTimeout(), "open " + name);
                if (!opened.isOk()) {
                    LOG.warn("OR-set repository {}: cannot open {} for reading: {} {}", ownLog, name, opened.status(), opened.reason());
                    continue;
                }
                handle = opened.queue();
            }
            cursors.put(name, new Cursor(name, handle));
        }
    }

    private KvsQueue cursorHandle(String log) throws MessagingException {
        Cursor cursor = cursors.get(log);
        if (cursor == null) {
            throw new MessagingException("No read handle on " + log);
        }
        return cursor.handle;
    }

    private void catchUp(Cursor cursor) {
        long now = System.nanoTime();
        if (now - cursor.lastRescan >= options.rescanInterval().toNanos()) {
            cursor.position = 0;
            cursor.lastRescan = now;
        }
        if (cursor.handle instanceof ReplicatedQueue replicated) {
            int changes = Futures.await(replicated.readCopyChanges(), configuration.requestTimeout(), "copy of " + cursor.name);
            if (changes != cursor.copyChanges) {
                cursor.copyChanges = changes;
                cursor.position = 0;
            }
        }
        boolean own = cursor.name.equals(ownLog);
        while (true) {
            ReadResult result = Futures.await(cursor.handle.read(cursor.position, configuration.readBlockSize(), configuration.readBlockBytes(), 0),
                configuration.requestTimeout(), "read " + cursor.name);
            if (!result.isOk()) {
                throw new IllegalStateException("READ failed on " + cursor.name + ": " + result.status() + " " + result.reason());
            }
            List<OrSetOp<MailRef>> ops = new ArrayList<>(result.messages().size());
            for (StoredMessage message : result.messages()) {
                try {
                    ops.add(OpCodec.decode(message.body(), (tag, mail) -> new MailRef(cursor.name, tag)));
                } catch (RuntimeException e) {
                    LOG.error("OR-set repository {}: skipping undecodable message at {} of {}", ownLog, message.position(), cursor.name, e);
                }
            }
            synchronized (stateLock) {
                for (OrSetOp<MailRef> op : ops) {
                    set.apply(op);
                }
            }
            if (own) {
                for (OrSetOp<MailRef> op : ops) {
                    if (op instanceof OrSetOp.Add<MailRef> add) {
                        ownAdds.putIfAbsent(add.tag(), add.supersedes());
                    }
                }
            }
            cursor.position = Math.max(cursor.position, result.nextPosition());
            if (result.messages().isEmpty()) {
                return;
            }
        }
    }

    /** Deletes (or shrinks to their REMOVE part) the own ADDs known to be removed. Best effort, async. */
    private void collectGarbage() {
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
                    ownAdds.remove(tag);
                }
                collecting.remove(tag);
            });
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
                if (!name.equals(ownLog)) {
                    cursor.handle.close();
                }
            });
            cursors.clear();
            lastDiscovery = Long.MIN_VALUE;
        }
    }

    private static final class Cursor {
        final String name;
        final KvsQueue handle;
        long position;
        long lastRescan = System.nanoTime();
        int copyChanges;

        Cursor(String name, KvsQueue handle) {
            this.name = name;
            this.handle = handle;
        }
    }
}
