package org.jameskvs.james.repository.orset;

import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

import javax.inject.Inject;
import javax.mail.MessagingException;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepository;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.mailet.Mail;
import org.jameskvs.james.KvsQueueOpener;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;

/**
 * A James mail repository written by every James node of a cluster at once, converging without
 * coordination: an add-wins observed-remove set ({@link OrSet}) whose operations are kept in one KVS
 * queue <i>per James node</i>, {@code <namespace>/repo/<path>#<nodeId>}.
 *
 * <ul>
 * <li><b>Writes</b> ({@link OwnLog}): a node appends to its own log only: {@code store} = ADD(key,
 * fresh tag, superseded tags observed for the key, mail), {@code remove} = REMOVE(tags of the key
 * observed here), {@code removeAll} = REMOVE(every observed tag), split into operations of at most
 * {@link #MAX_TAGS_PER_REMOVE} tags.</li>
 * <li><b>Reads</b>: the state ({@link LocalReplica}) is the merge of every node's log. Logs are found
 * by listing the queues with the repository's prefix ({@link NodeLogs}) and read incrementally
 * ({@link LogReader}); the other nodes' logs through {@link LogCopies}: read-only handles on every
 * copy (on the replicated backend, every KVS node holding a queue of that name; the union is
 * applied). With {@code syncOnAccess} (default) every call first catches up with all logs
 * ({@link ReplicaSync}); {@link #startTailing} does it in the background instead.</li>
 * <li><b>Retrieve</b> returns the mail of the winning live add of the key ({@link OrSet#WINNER}),
 * fetched by GET from the log holding it; the in-memory state holds only references
 * ({@link MailRef}).</li>
 * <li><b>Garbage collection</b> ({@link GarbageCollector}, rules G1-G4): removed ADDs, REMOVE records
 * and tombstones disappear once every node has synced a few times; logs shrink to the live ADDs.</li>
 * </ul>
 *
 * This class only adapts James' {@link MailRepository} calls to those parts and wires them.
 */
public class OrSetMailRepository implements MailRepository, AutoCloseable {
    public static final String NODE_SEPARATOR = "#";
    public static final int MAX_TAGS_PER_REMOVE = 2000;
    /** Most tags a garbage collection round checks (GETs issued at once). */
    public static final int GC_BATCH = GarbageCollector.MAX_CHECKS_PER_ROUND;

    /** Tunables. */
    public record Options(boolean syncOnAccess, Duration discoveryInterval, Duration rescanInterval, Duration gcInterval) {
        public Options(boolean syncOnAccess, Duration discoveryInterval, Duration rescanInterval) {
            this(syncOnAccess, discoveryInterval, rescanInterval, Duration.ofSeconds(30));
        }

        public static Options defaults() {
            return new Options(true, Duration.ofSeconds(1), Duration.ofMinutes(5), Duration.ofSeconds(30));
        }
    }

    private final String nodeId;
    private final String prefix;
    private final Options options;
    private final LongSupplier millis;
    private final LocalReplica replica = new LocalReplica();
    private final OwnLog ownLog;
    private final NodeLogs logs;
    private final GarbageCollector garbage;
    private final ReplicaSync sync;

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
        KvsSpoolConfiguration configuration = queues.configuration();
        this.nodeId = nodeId;
        this.prefix = configuration.mailRepositoryPrefix() + url.getPath().asString() + NODE_SEPARATOR;
        this.options = options;
        this.millis = millis;
        this.ownLog = new OwnLog(queues, replica, prefix + nodeId, nodeId);
        LogCopies copies = new LogCopies(opener, configuration, options.discoveryInterval());
        this.logs = new NodeLogs(queues, copies, ownLog, prefix, options.discoveryInterval());
        this.garbage = new GarbageCollector(replica, ownLog, logs, configuration.requestTimeout(), options.gcInterval());
        LogReader reader = new LogReader(configuration, replica, ownLog, logs, garbage, options.rescanInterval());
        this.sync = new ReplicaSync(logs, reader, garbage, ownLog.name());
    }

    public String nodeId() {
        return nodeId;
    }

    /** Catches up in the background every {@code interval} (besides or instead of syncOnAccess). */
    public void startTailing(Duration interval) {
        sync.startTailing(interval);
    }

    // ---------------------------------------------------------------- MailRepository

    @Override
    public long size() throws MessagingException {
        syncIfAsked();
        return replica.size();
    }

    @Override
    public MailKey store(Mail mail) throws MessagingException {
        MailKey key = MailKey.forMail(mail);
        byte[] mailBytes = MailCodec.encode(mail);
        syncIfAsked();
        Tag tag = ownLog.nextTag();
        OrSetOp.Add<MailRef> add = replica.prepareAdd(key.asString(), tag, millis.getAsLong(), new MailRef(ownLog.name(), tag));
        ownLog.append(add, mailBytes);
        return key;
    }

    @Override
    public Iterator<MailKey> list() throws MessagingException {
        syncIfAsked();
        List<String> keys = replica.keys();
        return keys.stream().map(MailKey::new).iterator();
    }

    @Override
    public Mail retrieve(MailKey key) throws MessagingException {
        syncIfAsked();
        for (int attempt = 0; attempt < 3; attempt++) {
            Optional<OrSet.Entry<MailRef>> winner = replica.winner(key.asString());
            if (winner.isEmpty()) {
                return null;
            }
            MailRef ref = winner.get().payload();
            byte[] mail = logs.fetchMail(ref);
            if (mail != null) {
                return MailCodec.decode(mail, ref.log() + "/" + ref.tag().asId());
            }
            // Collected meanwhile: its removal is in some log; catch up and look again.
            sync();
        }
        return null;
    }

    @Override
    public void remove(MailKey key) throws MessagingException {
        syncIfAsked();
        Optional<OrSetOp.Remove<MailRef>> remove = replica.prepareRemove(key.asString(), ownLog.nextTag());
        if (remove.isEmpty()) {
            // Not seen here: maybe stored on a node whose log this one has not discovered yet.
            syncNow(true);
            remove = replica.prepareRemove(key.asString(), ownLog.nextTag());
        }
        if (remove.isPresent()) {
            write(remove.get(), key.asString());
        }
    }

    @Override
    public void removeAll() throws MessagingException {
        syncIfAsked();
        List<OrSetOp.Remove<MailRef>> removes = replica.prepareRemoveAll(ownLog::nextTag, MAX_TAGS_PER_REMOVE);
        for (OrSetOp.Remove<MailRef> remove : removes) {
            write(remove, "");
        }
    }

    private void write(OrSetOp.Remove<MailRef> remove, String key) throws MessagingException {
        ownLog.append(remove, key);
        garbage.collectOwnAdds();
    }

    // ---------------------------------------------------------------- syncing

    /** Catches up with every node's log (discovering new nodes at most every discoveryInterval). */
    public void sync() {
        sync.run(false, false);
    }

    /**
     * A full pass over every log and a garbage collection round, now (tests, admin). Returns the
     * number of records, tombstones and stale live adds collected so far by this object.
     */
    public long collectGarbageNow() {
        sync.run(true, true);
        garbage.awaitOwnDeletes();
        return garbage.collected();
    }

    private void syncNow(boolean forceDiscovery) throws MessagingException {
        try {
            sync.run(forceDiscovery, false);
        } catch (RuntimeException e) {
            throw new MessagingException("Cannot read the logs of " + prefix, e);
        }
    }

    private void syncIfAsked() throws MessagingException {
        if (options.syncOnAccess()) {
            syncNow(false);
        }
    }

    // ---------------------------------------------------------------- state, for tests and admin

    /** The live keys and tags as this node sees them (tests: convergence). */
    public Map<String, Set<Tag>> liveTags() {
        return replica.liveTags();
    }

    /** True if the key is present in the local state, without reading the logs. */
    public boolean containsLocally(String key) {
        return replica.contains(key);
    }

    public int tombstones() {
        return replica.tombstoneCount();
    }

    /** Records (ADD and REMOVE) of this node still in its own log, as far as this object knows. */
    public int ownRecords() {
        return ownLog.records();
    }

    /** Stops tailing and releases the read handles (the own write handle belongs to {@link KvsQueues}). */
    @Override
    public void close() {
        sync.close();
    }
}
