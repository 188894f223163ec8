package org.jameskvs.james.repository.orset;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import javax.mail.MessagingException;

import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.james.Futures;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;

/**
 * The node's own log, the only queue it writes (one writer per queue, as the epoch fencing
 * requires): makes the node's tags, appends its operations, and knows which of its records are still
 * in the log (what the {@link GarbageCollector} may delete, G1 and G3).
 *
 * <p>KVS message id = the operation's tag ({@link Tag#asId()}); body = {@link OpCodec}. An operation
 * is applied to the {@link LocalReplica} once the KVS acknowledged it (read-your-writes).
 */
final class OwnLog {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final KvsQueues queues;
    private final KvsSpoolConfiguration configuration;
    private final LocalReplica replica;
    private final String name;
    private final String nodeId;
    private final long session;
    private final AtomicLong counter = new AtomicLong();
    /** Own ADDs still in the own log: tag -> superseded tags (for G1). */
    private final Map<Tag, Set<Tag>> adds = new ConcurrentHashMap<>();
    /** Own REMOVE records still in the own log: id -> removed tags (for G3). */
    private final Map<Tag, Set<Tag>> removes = new ConcurrentHashMap<>();

    OwnLog(KvsQueues queues, LocalReplica replica, String name, String nodeId) {
        this.queues = queues;
        this.configuration = queues.configuration();
        this.replica = replica;
        this.name = name;
        this.nodeId = nodeId;
        this.session = RANDOM.nextLong() & Long.MAX_VALUE;
    }

    /** The queue name, {@code <namespace>/repo/<path>#<nodeId>}. */
    String name() {
        return name;
    }

    /** The write handle, from {@link KvsQueues} (which re-opens it after a takeover, so never cached here). */
    KvsQueue handle() {
        return queues.get(name);
    }

    Tag nextTag() {
        return new Tag(nodeId, session, counter.incrementAndGet());
    }

    /** Appends a store of {@code key}, then applies it here. */
    void append(OrSetOp.Add<MailRef> add, byte[] mail) throws MessagingException {
        String key = add.key();
        byte[] body = OpCodec.encodeAdd(add, mail);
        Ack ack = KvsCall.forJames(() -> Futures.await(handle().put(add.tag().idBytes(), 0, 0, stateOf(OpCodec.ADD, key), body),
            configuration.requestTimeout(), "put " + name));
        if (!ack.isOk()) {
            // Outcome unknown on TIMEOUT: if it was written, reading the own log applies it later.
            throw new MessagingException("Cannot store " + key + " in " + name + ": " + ack.status() + " " + ack.reason());
        }
        adds.put(add.tag(), add.supersedes());
        replica.apply(add);
    }

    /** Appends a remove ({@code key}: the removed key, or "" for several), then applies it here. */
    void append(OrSetOp.Remove<MailRef> remove, String key) throws MessagingException {
        Ack ack = KvsCall.forJames(() -> Futures.await(handle().put(remove.id().idBytes(), 0, 0, stateOf(OpCodec.REMOVE, key), OpCodec.encodeRemove(remove)),
            configuration.requestTimeout(), "put " + name));
        if (!ack.isOk()) {
            throw new MessagingException("Cannot remove from " + name + ": " + ack.status() + " " + ack.reason());
        }
        replica.apply(remove);
        removes.put(remove.id(), remove.tags());
    }

    /** An operation read back from the log: notes its record (it may predate this object). */
    void noteRead(OrSetOp<MailRef> op) {
        if (op instanceof OrSetOp.Add<MailRef> add) {
            adds.putIfAbsent(add.tag(), add.supersedes());
        } else if (op instanceof OrSetOp.Remove<MailRef> remove) {
            removes.putIfAbsent(remove.id(), remove.tags());
        }
    }

    /** Own ADDs still in the log: tag -> superseded tags (a live view). */
    Map<Tag, Set<Tag>> addsInLog() {
        return Collections.unmodifiableMap(adds);
    }

    /** Own REMOVE records still in the log: id -> removed tags (a live view). */
    Map<Tag, Set<Tag>> removesInLog() {
        return Collections.unmodifiableMap(removes);
    }

    /** Records (ADD and REMOVE) still in the log, as far as this object knows. */
    int records() {
        return adds.size() + removes.size();
    }

    /**
     * Deletes the ADD {@code tag} or, if it superseded tags, replaces it atomically by a REMOVE of
     * those tags (same id). Completes with true once the ADD is gone (also if it already was).
     */
    CompletableFuture<Boolean> dropAdd(Tag tag, Set<Tag> supersedes) {
        CompletableFuture<Ack> done = supersedes.isEmpty()
            ? handle().delete(tag.idBytes())
            : handle().putReplacing(tag.idBytes(), 0, 0, stateOf(OpCodec.REMOVE, ""), OpCodec.encodeRemove(new OrSetOp.Remove<>(tag, supersedes)));
        return done.handle((ack, error) -> {
            if (error == null && (ack.isOk() || ack.status() == Status.NOT_FOUND)) {
                if (!supersedes.isEmpty() && ack.isOk()) {
                    removes.put(tag, supersedes);
                }
                adds.remove(tag);
                return true;
            }
            return false;
        });
    }

    /** Deletes the REMOVE record {@code id}. Completes with true once it is gone (also if it already was). */
    CompletableFuture<Boolean> dropRemove(Tag id) {
        return handle().delete(id.idBytes()).handle((ack, error) -> {
            if (error == null && (ack.isOk() || ack.status() == Status.NOT_FOUND)) {
                removes.remove(id);
                return true;
            }
            return false;
        });
    }

    /** The message state: the operation type, then (at most 200 bytes of) the key. */
    private static byte[] stateOf(int type, String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(k.length, 200);
        byte[] state = new byte[n + 1];
        state[0] = (byte) type;
        System.arraycopy(k, 0, state, 1, n);
        return state;
    }
}
