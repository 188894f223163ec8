package org.jameskvs.james.codec;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import javax.mail.MessagingException;
import javax.mail.internet.MimeMessage;

import org.apache.james.core.MailAddress;
import org.apache.james.core.MaybeSender;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageWrapper;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.Mail;
import org.apache.mailet.PerRecipientHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compact, versioned binary form of a whole James {@link Mail}: envelope, attributes and the MIME
 * bytes unchanged. It is the body of a KVS message.
 *
 * <h2>Layout, version 1</h2>
 * All integers big-endian. {@code str} is an i32 byte length (-1 for null) then UTF-8 bytes.
 * <pre>
 * bytes 'J' 'K' 'M'        magic
 * u8    1                  version
 * str   name
 * u8    senderKind         0 = null sender (&lt;&gt;, or none), 1 = an address follows
 * str   sender             (only when senderKind = 1)
 * i32   n, n x str         recipients, in order
 * str   state
 * str   errorMessage
 * str   remoteAddr
 * str   remoteHost
 * i64   lastUpdated        epoch ms, Long.MIN_VALUE when null
 * i32   n                  per-recipient headers: n recipients, each
 *         str recipient, i32 m, m x (str name, str value)
 * i32   n                  attributes, each: str name, str value as AttributeValue JSON
 *                          (AttributeValue.toJson, written and read by AttributeJson)
 * u8    hasMessage         0 = the mail has no MimeMessage
 * tail                     the MIME bytes (writeMime: MimeMessage.writeTo's, or an unmodified
 *                          message's bytes as they came)
 * </pre>
 * DSN parameters need no section: James keeps them in mail attributes
 * ({@code Mail.setDsnParameters} writes them there), so they travel with the attributes.
 * Attributes whose value has no JSON serializer ({@code AttributeValue.ofUnserializable}) cannot be
 * stored; they are dropped with a warning, as James's own persistent queues do.
 */
public final class MailCodec {
    private static final Logger LOGGER = LoggerFactory.getLogger(MailCodec.class);
    private static final byte[] MAGIC = {'J', 'K', 'M'};
    public static final int VERSION = 1;

    private MailCodec() {
    }

    public static byte[] encode(Mail mail) throws MessagingException {
        try {
            MimeMessage message = mail.getMessage();
            // MimeMessage.getSize is the body size when known, without serializing anything
            // (Mail.getMessageSize may write the whole message once just to count it).
            long sizeHint = message == null ? 0 : Math.max(0, message.getSize());
            ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) Math.min(Integer.MAX_VALUE - 16, sizeHint + 4096));
            DataOutputStream out = new DataOutputStream(bytes);
            out.write(MAGIC);
            out.writeByte(VERSION);
            writeString(out, mail.getName());
            MaybeSender sender = mail.getMaybeSender();
            if (sender.isNullSender()) {
                out.writeByte(0);
            } else {
                out.writeByte(1);
                writeString(out, sender.asString());
            }
            Collection<MailAddress> recipients = mail.getRecipients();
            out.writeInt(recipients.size());
            for (MailAddress recipient : recipients) {
                writeString(out, recipient.asString());
            }
            writeString(out, mail.getState());
            writeString(out, mail.getErrorMessage());
            writeString(out, mail.getRemoteAddr());
            writeString(out, mail.getRemoteHost());
            Date lastUpdated = mail.getLastUpdated();
            out.writeLong(lastUpdated == null ? Long.MIN_VALUE : lastUpdated.getTime());
            writePerRecipientHeaders(out, mail.getPerRecipientSpecificHeaders());
            writeAttributes(out, mail);
            if (message == null) {
                out.writeByte(0);
            } else {
                out.writeByte(1);
                out.flush();
                writeMime(message, bytes);
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new MessagingException("Cannot encode mail " + mail.getName(), e);
        }
    }

    /**
     * The message's MIME bytes. An unmodified James {@link MimeMessageWrapper} (what a mail read back
     * from a queue holds until a mailet changes it; {@code MailImpl.setMessage} also wraps what it is
     * given in one) is copied from its source as it came: James 3.8.1's {@code writeTo} parses the
     * headers and writes them out again on every call, even for an unmodified message, and a mail is
     * encoded once per queue it enters (1 KB encode 19.8 -> 6.3 us, report/plugin-cost.md). For a
     * message whose lines end in CRLF, as SMTP delivers them, the bytes are the same as
     * {@code writeTo}'s ({@code MailCodecTest}); a header line ending in a bare LF is kept as it came
     * instead of being written with CRLF, and {@code writeTo} does that rewriting when the decoded
     * mail is written out (delivery, export). A modified message, or one that is not a
     * wrapper, goes through {@code writeTo}.
     */
    static void writeMime(MimeMessage message, OutputStream out) throws IOException, MessagingException {
        if (message instanceof MimeMessageWrapper wrapper && !wrapper.isModified()) {
            try (InputStream in = wrapper.getMessageInputStream()) {
                in.transferTo(out);
            }
            return;
        }
        message.writeTo(out);
    }

    /**
     * @param sourceId names the MIME source (for James's logs and caches), e.g. the KVS message id
     */
    public static MailImpl decode(byte[] body, String sourceId) throws MessagingException {
        ByteBuffer in = ByteBuffer.wrap(body);
        try {
            for (byte b : MAGIC) {
                if (in.get() != b) {
                    throw new MessagingException("Not an encoded mail: bad magic (" + sourceId + ")");
                }
            }
            int version = in.get() & 0xFF;
            if (version != VERSION) {
                throw new MessagingException("Unsupported mail encoding version " + version + " (" + sourceId + ")");
            }
            MailImpl.Builder builder = MailImpl.builder().name(readString(in));
            if (in.get() == 1) {
                builder.sender(new MailAddress(readString(in)));
            }
            int recipientCount = in.getInt();
            List<MailAddress> recipients = new ArrayList<>(Math.min(recipientCount, 1 << 16));
            for (int i = 0; i < recipientCount; i++) {
                recipients.add(new MailAddress(readString(in)));
            }
            builder.addRecipients(recipients);
            Optional.ofNullable(readString(in)).ifPresent(builder::state);
            Optional.ofNullable(readString(in)).ifPresent(builder::errorMessage);
            Optional.ofNullable(readString(in)).ifPresent(builder::remoteAddr);
            Optional.ofNullable(readString(in)).ifPresent(builder::remoteHost);
            long lastUpdated = in.getLong();
            if (lastUpdated != Long.MIN_VALUE) {
                builder.lastUpdated(new Date(lastUpdated));
            }
            builder.addAllHeadersForRecipients(readPerRecipientHeaders(in));
            builder.addAttributes(readAttributes(in));
            boolean hasMessage = in.get() == 1;
            MailImpl mail = builder.build();
            if (hasMessage) {
                mail.setMessageContent(new BytesMimeMessageSource(sourceId, body, in.position(), in.remaining()));
            }
            return mail;
        } catch (BufferUnderflowException e) {
            throw new MessagingException("Truncated encoded mail (" + sourceId + ")", e);
        } catch (IOException e) {
            throw new MessagingException("Cannot decode mail (" + sourceId + ")", e);
        }
    }

    private static void writePerRecipientHeaders(DataOutputStream out, PerRecipientHeaders headers) throws IOException {
        Map<MailAddress, Collection<PerRecipientHeaders.Header>> byRecipient = headers.getHeadersByRecipient().asMap();
        out.writeInt(byRecipient.size());
        for (Map.Entry<MailAddress, Collection<PerRecipientHeaders.Header>> entry : byRecipient.entrySet()) {
            writeString(out, entry.getKey().asString());
            out.writeInt(entry.getValue().size());
            for (PerRecipientHeaders.Header header : entry.getValue()) {
                writeString(out, header.getName());
                writeString(out, header.getValue());
            }
        }
    }

    private static PerRecipientHeaders readPerRecipientHeaders(ByteBuffer in) throws IOException, MessagingException {
        PerRecipientHeaders headers = new PerRecipientHeaders();
        int recipientCount = in.getInt();
        for (int i = 0; i < recipientCount; i++) {
            MailAddress recipient = new MailAddress(readString(in));
            int headerCount = in.getInt();
            for (int j = 0; j < headerCount; j++) {
                headers.addHeaderForRecipient(PerRecipientHeaders.Header.builder()
                    .name(readString(in))
                    .value(readString(in))
                    .build(), recipient);
            }
        }
        return headers;
    }

    private static void writeAttributes(DataOutputStream out, Mail mail) throws IOException {
        List<String[]> serialized = new ArrayList<>();
        for (Attribute attribute : (Iterable<Attribute>) mail.attributes()::iterator) {
            String json = AttributeJson.write(attribute.getValue());
            if (json != null) {
                serialized.add(new String[] {attribute.getName().asString(), json});
            } else {
                LOGGER.warn("Mail {}: attribute {} has no serializer and is not stored", mail.getName(),
                    attribute.getName().asString());
            }
        }
        out.writeInt(serialized.size());
        for (String[] attribute : serialized) {
            writeString(out, attribute[0]);
            writeString(out, attribute[1]);
        }
    }

    private static List<Attribute> readAttributes(ByteBuffer in) throws IOException {
        int count = in.getInt();
        List<Attribute> attributes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            AttributeName name = AttributeName.of(readString(in));
            attributes.add(new Attribute(name, AttributeJson.read(readString(in))));
        }
        return attributes;
    }

    private static void writeString(DataOutputStream out, String value) throws IOException {
        if (value == null) {
            out.writeInt(-1);
            return;
        }
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    private static String readString(ByteBuffer in) throws IOException {
        int length = in.getInt();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > in.remaining()) {
            throw new IOException("Bad string length " + length);
        }
        String value = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return value;
    }
}
