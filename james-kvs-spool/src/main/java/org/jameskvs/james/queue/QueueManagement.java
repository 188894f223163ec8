package org.jameskvs.james.queue;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import javax.mail.MessagingException;

import org.apache.james.core.MailAddress;
import org.apache.james.queue.api.MailQueue.MailQueueException;
import org.apache.james.queue.api.ManageableMailQueue.DefaultMailQueueItemView;
import org.apache.james.queue.api.ManageableMailQueue.MailQueueItemView;
import org.apache.james.queue.api.ManageableMailQueue.MailQueueIterator;
import org.apache.james.queue.api.ManageableMailQueue.Type;
import org.apache.mailet.Mail;
import org.jameskvs.client.Ack;
import org.jameskvs.client.QueueStat;
import org.jameskvs.james.Futures;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;

/**
 * The management side of one James queue (webadmin's size, browse, flush, clear and remove), straight on
 * its KVS queues, block by block ({@link QueueBrowser}); after a change the reader rescans, so that it
 * hands out what is now ready and forgets what is gone.
 */
final class QueueManagement {
    private final String name;
    private final PriorityLevels levels;
    private final KvsSpoolConfiguration configuration;
    private final MailQueueReader reader;

    QueueManagement(String name, PriorityLevels levels, KvsSpoolConfiguration configuration, MailQueueReader reader) {
        this.name = name;
        this.levels = levels;
        this.configuration = configuration;
        this.reader = reader;
    }

    long getSize() throws MailQueueException {
        try {
            List<CompletableFuture<QueueStat>> stats = new ArrayList<>();
            for (int level : levels.levels()) {
                stats.add(levels.queue(level).stat());
            }
            long size = 0;
            for (CompletableFuture<QueueStat> future : stats) {
                QueueStat stat = Futures.await(future, configuration.requestTimeout(), "stat " + name);
                if (!stat.isOk()) {
                    throw new MailQueueException("STAT failed on " + name + ": " + stat.status() + " " + stat.reason());
                }
                size += stat.size();
            }
            return size;
        } catch (RuntimeException e) {
            throw new MailQueueException("Cannot get the size of " + name, e);
        }
    }

    /** The size for the queue-size gauge: -1 when it cannot be read. */
    Long sizeForGauge() {
        try {
            return getSize();
        } catch (MailQueueException e) {
            return -1L;
        }
    }

    /** Makes every delayed mail ready now; it keeps its place (position) in its level. */
    long flush() throws MailQueueException {
        long now = System.currentTimeMillis();
        long flushed = 0;
        try {
            QueueBrowser browser = new QueueBrowser(levels, configuration);
            while (browser.hasNext()) {
                QueueBrowser.Entry entry = browser.next();
                StoredMessage message = entry.message();
                if (message.notBefore() > 0) {
                    Ack ack = Futures.await(levels.queue(entry.level()).replace(message.id(), message.priority(), 0, message.state()),
                        configuration.requestTimeout(), "flush");
                    if (ack.isOk() && message.notBefore() > now) {
                        flushed++;
                    }
                }
            }
        } catch (RuntimeException e) {
            throw new MailQueueException("Cannot flush " + name, e);
        } finally {
            reader.rescanAll();
        }
        return flushed;
    }

    long clear() throws MailQueueException {
        long size = getSize();
        try {
            for (int level : levels.levels()) {
                Ack ack = Futures.await(levels.queue(level).clear(), configuration.requestTimeout(), "clear");
                if (!ack.isOk()) {
                    throw new MailQueueException("CLEAR failed on " + name + ": " + ack.status() + " " + ack.reason());
                }
            }
        } catch (RuntimeException e) {
            throw new MailQueueException("Cannot clear " + name, e);
        } finally {
            reader.rescanAll();
        }
        return size;
    }

    long remove(Type type, String value) throws MailQueueException {
        Predicate<Mail> matches = matcher(type, value);
        long removed = 0;
        try {
            QueueBrowser browser = new QueueBrowser(levels, configuration);
            while (browser.hasNext()) {
                QueueBrowser.Entry entry = browser.next();
                Mail mail = MailCodec.decode(entry.message().body(), MessageIds.asString(entry.message().id()));
                if (matches.test(mail)) {
                    Ack ack = Futures.await(levels.queue(entry.level()).delete(entry.message().id()),
                        configuration.requestTimeout(), "remove");
                    if (ack.isOk()) {
                        removed++;
                    }
                }
            }
        } catch (MessagingException | RuntimeException e) {
            throw new MailQueueException("Cannot remove " + type + "=" + value + " from " + name, e);
        } finally {
            reader.rescanAll();
        }
        return removed;
    }

    private static Predicate<Mail> matcher(Type type, String value) {
        switch (type) {
            case Name:
                return mail -> value.equals(mail.getName());
            case Sender:
                return mail -> mail.getMaybeSender().asString().equals(value);
            case Recipient:
                return mail -> mail.getRecipients().stream().map(MailAddress::asString).anyMatch(value::equals);
            default:
                throw new IllegalArgumentException("Unknown type " + type);
        }
    }

    MailQueueIterator browse() throws MailQueueException {
        QueueBrowser browser = new QueueBrowser(levels, configuration);
        return new MailQueueIterator() {
            @Override
            public boolean hasNext() {
                return browser.hasNext();
            }

            @Override
            public MailQueueItemView next() {
                StoredMessage message = browser.next().message();
                try {
                    Mail mail = MailCodec.decode(message.body(), MessageIds.asString(message.id()));
                    return new DefaultMailQueueItemView(mail, nextDelivery(message.notBefore()));
                } catch (MessagingException e) {
                    throw new IllegalStateException("Cannot decode mail " + MessageIds.asString(message.id()), e);
                }
            }

            @Override
            public void close() {
                // Nothing held: the browser reads block by block.
            }
        };
    }

    private static Optional<ZonedDateTime> nextDelivery(long notBefore) {
        if (notBefore <= 0) {
            return Optional.empty();
        }
        return Optional.of(Instant.ofEpochMilli(notBefore).atZone(ZoneOffset.UTC));
    }
}
