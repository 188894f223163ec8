package org.jameskvs.app.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Stream;

import javax.mail.Address;
import javax.mail.Message;
import javax.mail.MessagingException;
import javax.mail.Session;
import javax.mail.internet.InternetAddress;
import javax.mail.internet.MimeMessage;

import org.apache.james.core.MailAddress;
import org.apache.james.server.core.MailImpl;
import org.apache.mailet.Mail;
import org.jameskvs.client.Ack;
import org.jameskvs.client.KvsQueue;
import org.jameskvs.client.OpenOptions;
import org.jameskvs.client.OpenResult;
import org.jameskvs.client.ReadResult;
import org.jameskvs.james.Futures;
import org.jameskvs.james.ReplicatedKvsOpener;
import org.jameskvs.james.codec.MailCodec;
import org.jameskvs.james.config.KvsSpoolConfiguration;
import org.jameskvs.protocol.StoredMessage;

/**
 * {@code kvs-admin export} and {@code import}: James mail in a KVS queue to and from {@code .eml}
 * files (the MIME message as received; the envelope is not in an .eml: import takes the sender from
 * {@code Return-Path} or {@code From}, the recipients from {@code To} and {@code Cc}).
 */
final class MailFiles {
    /** Owner name the import writes under (a queue held by a James is refused unless taken over). */
    static final String OWNER = "kvs-admin";
    private static final int BLOCK = 64;

    private final KvsSpoolConfiguration configuration;
    private final ReplicatedKvsOpener opener;

    MailFiles(KvsSpoolConfiguration configuration, ReplicatedKvsOpener opener) {
        this.configuration = configuration;
        this.opener = opener;
    }

    /** @return the number of mails written; reads an in-sync copy read-only, fencing nothing */
    int export(String queue, Path directory) throws IOException, MessagingException {
        Files.createDirectories(directory);
        OpenResult open = Futures.await(opener.open(queue, OpenOptions.reader()), configuration.requestTimeout(), "open " + queue);
        if (!open.isOk()) {
            throw new IllegalStateException("cannot read " + queue + ": " + open.status() + " " + open.reason());
        }
        int written = 0;
        try (KvsQueue handle = open.queue()) {
            long position = 0;
            while (true) {
                // Past the commit point: with no James left, its last acknowledged mails may be beyond the
                // commit point the servers know (a failed put may come along: a duplicate, never a loss).
                ReadResult read = Futures.await(handle.readUncommitted(position, BLOCK, configuration.readBlockBytes(), 0),
                    configuration.requestTimeout(), "read " + queue);
                if (!read.isOk()) {
                    throw new IllegalStateException("reading " + queue + " failed: " + read.status() + " " + read.reason());
                }
                if (read.messages().isEmpty()) {
                    return written;
                }
                for (StoredMessage message : read.messages()) {
                    Mail mail = MailCodec.decode(message.body(), new String(message.id(), StandardCharsets.US_ASCII));
                    try (OutputStream out = Files.newOutputStream(directory.resolve(String.format("%06d.eml", ++written)))) {
                        mail.getMessage().writeTo(out);
                    }
                }
                position = read.nextPosition();
            }
        }
    }

    /** @return the number of mails stored (each acknowledged by two copies) */
    int importInto(String queue, Path directory, boolean takeOver) throws IOException, MessagingException {
        List<Path> files;
        try (Stream<Path> listing = Files.list(directory)) {
            files = listing.filter(p -> p.getFileName().toString().endsWith(".eml")).sorted().toList();
        }
        OpenOptions writer = OpenOptions.writer(OWNER, 1);
        OpenResult open = Futures.await(takeOver ? opener.takeOver(queue, writer) : opener.open(queue, writer),
            configuration.requestTimeout(), "open " + queue);
        if (!open.isOk()) {
            throw new IllegalStateException("cannot write " + queue + ": " + open.status() + " " + open.reason()
                + (takeOver ? "" : " (held by a writer: import into another queue, or add --take-over to fence it)"));
        }
        int level = levelOf(queue);
        int stored = 0;
        try (KvsQueue handle = open.queue()) {
            for (Path file : files) {
                byte[] body = MailCodec.encode(mailFrom(file));
                Ack ack = Futures.await(handle.put(("import-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII), level, 0,
                    new byte[0], body), configuration.requestTimeout(), "put " + file);
                if (!ack.isOk()) {
                    throw new IllegalStateException(file + " not stored (" + stored + " before it were): " + ack.status() + " "
                        + ack.reason());
                }
                stored++;
            }
        }
        return stored;
    }

    private static Mail mailFrom(Path file) throws IOException, MessagingException {
        MimeMessage message;
        try (InputStream in = Files.newInputStream(file)) {
            message = new MimeMessage(Session.getInstance(new Properties()), in);
        }
        List<MailAddress> recipients = new ArrayList<>();
        for (Message.RecipientType type : List.of(Message.RecipientType.TO, Message.RecipientType.CC)) {
            Address[] addresses = message.getRecipients(type);
            for (Address address : addresses == null ? new Address[0] : addresses) {
                recipients.add(new MailAddress(((InternetAddress) address).getAddress()));
            }
        }
        if (recipients.isEmpty()) {
            throw new IllegalArgumentException(file + " names no recipient in To or Cc");
        }
        String[] returnPath = message.getHeader("Return-Path");
        Address[] from = message.getFrom();
        String sender = returnPath != null ? returnPath[0].replaceAll("[<>\\s]", "")
            : from != null && from.length > 0 ? ((InternetAddress) from[0]).getAddress() : "";
        return MailImpl.builder().name("import-" + UUID.randomUUID())
            .sender(sender.isEmpty() ? null : new MailAddress(sender))
            .addRecipients(recipients)
            .mimeMessage(message)
            .state(Mail.DEFAULT)
            .build();
    }

    /** The priority level of {@code <namespace>/queue/<name>@p<level>}; 5 (normal) for other names. */
    private static int levelOf(String queue) {
        int at = queue.lastIndexOf("@p");
        try {
            return at < 0 ? 5 : Integer.parseInt(queue.substring(at + 2));
        } catch (NumberFormatException e) {
            return 5;
        }
    }
}
