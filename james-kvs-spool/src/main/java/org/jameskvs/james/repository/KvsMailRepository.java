package org.jameskvs.james.repository;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;

import javax.inject.Inject;
import javax.mail.MessagingException;

import org.apache.james.mailrepository.api.MailKey;
import org.apache.james.mailrepository.api.MailRepository;
import org.apache.james.mailrepository.api.MailRepositoryUrl;
import org.apache.mailet.Mail;
import org.jameskvs.client.Ack;
import org.jameskvs.client.GetResult;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.QueueStat;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.PositionScan;
import org.jameskvs.james.KvsQueues;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.Status;
import org.jameskvs.protocol.StoredMessage;

/**
 * A James mail repository (e.g. {@code kvs://var/mail/error/}) kept in one KVS queue named
 * {@code <namespace>/repo/<path>}. The KVS message id is the mail key (its SHA-256 when the key is
 * longer than the 255 bytes an id may hold); the state blob holds the key itself so listing needs no
 * decoding; the body is the {@link MailCodec encoded mail}.
 *
 * <p>Storing a key again replaces the mail with one replacing PUT ({@code KvsQueue#putReplacing}):
 * one journal record on the server, so after any crash either the old or the new version is there,
 * never neither.
 *
 * <p>A repository has one writer, the James node that owns the namespace. Once this node is fenced
 * (another writer holds its queues, and so its repositories), every write (store, remove, removeAll)
 * is refused with a {@link MessagingException} naming the fencing, before anything is sent: a fenced
 * node must not change what the new owner now keeps. Reads still answer.
 */
public class KvsMailRepository implements MailRepository {
    private static final int MAX_ID_BYTES = 255;

    private final KvsQueues queues;
    private final KvsSpoolConfiguration configuration;
    private final String queueName;

    @Inject
    public KvsMailRepository(KvsQueues queues, MailRepositoryUrl url) {
        this.queues = queues;
        this.configuration = queues.configuration();
        this.queueName = configuration.mailRepositoryPrefix() + url.getPath().asString();
    }

    private KvsQueue queue() {
        return queues.get(queueName);
    }

    @Override
    public long size() throws MessagingException {
        QueueStat stat = call(() -> Futures.await(queue().stat(), configuration.requestTimeout(), "stat " + queueName));
        if (!stat.isOk()) {
            throw new MessagingException("STAT failed on " + queueName + ": " + stat.status() + " " + stat.reason());
        }
        return stat.size();
    }

    /** Refuses a write on a fenced node (see the class comment). */
    private void checkWritable(String what) throws MessagingException {
        if (queues.fencing().isFenced()) {
            throw new MessagingException("Cannot " + what + " in " + queueName + ": this James node is fenced ("
                + queues.fencing().cause().orElse("") + "); the repository belongs to the writer that holds this node's"
                + " queues, nothing was written");
        }
    }

    @Override
    public MailKey store(Mail mail) throws MessagingException {
        MailKey key = MailKey.forMail(mail);
        checkWritable("store " + key.asString());
        byte[] id = idOf(key);
        byte[] state = key.asString().getBytes(StandardCharsets.UTF_8);
        byte[] body = MailCodec.encode(mail);
        if (body.length + state.length > configuration.maxMailBytes()) {
            // Refused before sending: the servers would answer FRAME_TOO_LARGE after receiving it all.
            throw new MessagingException("Cannot store " + key.asString() + " in " + queueName + ": "
                + (body.length + state.length) + " bytes encoded, over the " + configuration.maxMailBytes()
                + " the KVS servers store (frameMaxBytes " + configuration.frameMaxBytes() + ")");
        }
        Ack ack = put(id, state, body);
        if (!ack.isOk()) {
            throw new MessagingException("Cannot store " + key.asString() + " in " + queueName + ": " + ack.status() + " " + ack.reason());
        }
        return key;
    }

    @Override
    public Iterator<MailKey> list() throws MessagingException {
        return new KeyIterator();
    }

    @Override
    public Mail retrieve(MailKey key) throws MessagingException {
        GetResult result = call(() -> Futures.await(queue().get(idOf(key)), configuration.requestTimeout(), "get " + queueName));
        if (result.status() == Status.NOT_FOUND) {
            return null;
        }
        if (!result.isOk()) {
            throw new MessagingException("Cannot retrieve " + key.asString() + " from " + queueName + ": " + result.status());
        }
        return MailCodec.decode(result.message().body(), queueName + "/" + key.asString());
    }

    @Override
    public void remove(MailKey key) throws MessagingException {
        checkWritable("remove " + key.asString());
        Ack ack = delete(idOf(key));
        if (!ack.isOk() && ack.status() != Status.NOT_FOUND) {
            throw new MessagingException("Cannot remove " + key.asString() + " from " + queueName + ": " + ack.status());
        }
    }

    @Override
    public void removeAll() throws MessagingException {
        checkWritable("remove every mail");
        Ack ack = call(() -> Futures.await(queue().clear(), configuration.requestTimeout(), "clear " + queueName));
        if (!ack.isOk()) {
            throw new MessagingException("Cannot clear " + queueName + ": " + ack.status());
        }
    }

    private Ack put(byte[] id, byte[] state, byte[] body) throws MessagingException {
        return call(() -> Futures.await(queue().putReplacing(id, 0, 0, state, body), configuration.requestTimeout(), "put " + queueName));
    }

    private Ack delete(byte[] id) throws MessagingException {
        return call(() -> Futures.await(queue().delete(id), configuration.requestTimeout(), "delete " + queueName));
    }

    static byte[] idOf(MailKey key) {
        byte[] utf8 = key.asString().getBytes(StandardCharsets.UTF_8);
        if (utf8.length >= 1 && utf8.length <= MAX_ID_BYTES) {
            return utf8;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(utf8);
            StringBuilder hex = new StringBuilder("#sha256:");
            for (byte b : digest) {
                hex.append(String.format("%02x", b));
            }
            return hex.toString().getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
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

    /** Lists keys block by block (bounded memory), tolerating concurrent stores and removals. */
    private final class KeyIterator implements Iterator<MailKey> {
        private final ArrayDeque<MailKey> block = new ArrayDeque<>();
        private final PositionScan scan = new PositionScan();

        @Override
        public boolean hasNext() {
            while (block.isEmpty() && !scan.isExhausted()) {
                ReadResult result = Futures.await(queue().read(scan.position(), configuration.readBlockSize(), configuration.readBlockBytes(), 0),
                    configuration.requestTimeout(), "list " + queueName);
                if (!result.isOk()) {
                    throw new IllegalStateException("READ failed on " + queueName + ": " + result.status() + " " + result.reason());
                }
                for (StoredMessage message : scan.accept(result)) {
                    block.add(new MailKey(new String(message.state(), StandardCharsets.UTF_8)));
                }
            }
            return !block.isEmpty();
        }

        @Override
        public MailKey next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return block.poll();
        }
    }
}
