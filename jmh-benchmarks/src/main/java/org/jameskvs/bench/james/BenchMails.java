package org.jameskvs.bench.james;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Random;

import javax.mail.MessagingException;

import org.apache.james.core.MailAddress;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageSource;
import org.apache.james.server.core.MimeMessageWrapper;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.PerRecipientHeaders;

/**
 * The mails the James benchmarks move: raw RFC 5322 bytes of a given shape, wrapped the way James's
 * spool holds them (an unmodified {@link MimeMessageWrapper} over a byte source, as after SMTP
 * reception or after a queue read), with an envelope and a realistic set of mail attributes.
 */
final class BenchMails {
    /** The shapes measured: {@code 1KB}, {@code 10KB}, {@code 1MB-attachment}, {@code 1000-recipients}. */
    static final String ONE_KB = "1KB";
    static final String TEN_KB = "10KB";
    static final String ATTACHMENT_1MB = "1MB-attachment";
    static final String RECIPIENTS_1000 = "1000-recipients";

    private BenchMails() {
    }

    /** The MIME bytes of a shape (deterministic). */
    static byte[] mime(String shape) {
        switch (shape) {
            case ONE_KB:
            case RECIPIENTS_1000:
                return textMessage(1024);
            case TEN_KB:
                return textMessage(10 * 1024);
            case ATTACHMENT_1MB:
                return attachmentMessage(1024 * 1024);
            default:
                throw new IllegalArgumentException("unknown mail shape " + shape);
        }
    }

    static int recipientCount(String shape) {
        return RECIPIENTS_1000.equals(shape) ? 1000 : 1;
    }

    /** A James mail of the given shape; every call returns a new mail over the same bytes. */
    static MailImpl mail(String name, String shape) throws MessagingException {
        byte[] bytes = mime(shape);
        return mail(name, recipients(recipientCount(shape)), source(bytes));
    }

    /**
     * A James mail with its envelope, attributes and one per-recipient header; its message an
     * unmodified {@link MimeMessageWrapper} over {@code content} ({@code setMessageContent}: no copy,
     * unlike {@code MailImpl.setMessage}, which copies the message in James 3.8.1).
     */
    static MailImpl mail(String name, List<MailAddress> recipients, MimeMessageSource content) throws MessagingException {
        MailImpl mail = MailImpl.builder()
            .name(name)
            .sender(new MailAddress("sender@example.org"))
            .addRecipients(recipients)
            .state("root")
            .remoteAddr("192.0.2.17")
            .remoteHost("mx.example.org")
            .lastUpdated(new Date(1_700_000_000_000L))
            .addAttributes(ATTRIBUTES)
            .addHeaderForRecipient(PerRecipientHeaders.Header.builder().name("Delivered-To").value(recipients.get(0).asString()).build(),
                recipients.get(0))
            .build();
        mail.setMessageContent(content);
        return mail;
    }

    /** Mail attributes a spool mail typically carries after SMTP and a few mailets (all JSON-serializable). */
    static final List<Attribute> ATTRIBUTES = List.of(
        Attribute.convertToAttribute("org.apache.james.smtp.authenticated.user", "alice@example.org"),
        new Attribute(org.apache.mailet.AttributeName.of("MAIL_PRIORITY"), AttributeValue.of(5)),
        Attribute.convertToAttribute("org.apache.james.mailetcontainer.isSpam", Boolean.FALSE),
        new Attribute(org.apache.mailet.AttributeName.of("org.apache.james.rrt.expanded"),
            AttributeValue.of(List.of(AttributeValue.of("alias-1@example.org"), AttributeValue.of("alias-2@example.org")))),
        new Attribute(org.apache.mailet.AttributeName.of("org.apache.james.dsn.parameters"),
            AttributeValue.of(Map.of("ENVID", AttributeValue.of("QQ314159"), "RET", AttributeValue.of("HDRS")))),
        Attribute.convertToAttribute("org.apache.james.received.timestamp", 1_700_000_000_123L));

    static List<MailAddress> recipients(int count) {
        List<MailAddress> recipients = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                recipients.add(new MailAddress("recipient-" + i + "@domain-" + (i % 17) + ".example.com"));
            }
        } catch (javax.mail.internet.AddressException e) {
            throw new IllegalStateException(e);
        }
        return recipients;
    }

    /** The MIME bytes as a James message source (wrapped unmodified, writeTo copies the bytes, nothing is parsed). */
    static MimeMessageSource source(byte[] bytes) {
        return new org.jameskvs.james.codec.BytesMimeMessageSource("bench-" + bytes.length, bytes, 0, bytes.length);
    }

    private static String headers(String subject, String contentType) {
        return "Return-Path: <sender@example.org>\r\n"
            + "Received: from mx.example.org (mx.example.org [192.0.2.17])\r\n"
            + "\tby james.example.com (JAMES SMTP Server) with ESMTPA ID 1234567890\r\n"
            + "\tfor <recipient-0@domain-0.example.com>; Tue, 14 Nov 2023 22:13:20 +0000 (UTC)\r\n"
            + "Message-ID: <bench-0123456789abcdef@example.org>\r\n"
            + "Date: Tue, 14 Nov 2023 22:13:20 +0000\r\n"
            + "From: Sender <sender@example.org>\r\n"
            + "To: Recipient <recipient-0@domain-0.example.com>\r\n"
            + "Subject: " + subject + "\r\n"
            + "MIME-Version: 1.0\r\n"
            + "Content-Type: " + contentType + "\r\n";
    }

    /** A text/plain mail whose whole MIME form is {@code totalSize} bytes. */
    private static byte[] textMessage(int totalSize) {
        StringBuilder sb = new StringBuilder(headers("Benchmark mail of " + totalSize + " bytes", "text/plain; charset=UTF-8"));
        sb.append("Content-Transfer-Encoding: 7bit\r\n\r\n");
        String line = "The quick brown fox jumps over the lazy dog, again and again, for the spool benchmark.\r\n";
        while (sb.length() + line.length() <= totalSize) {
            sb.append(line);
        }
        while (sb.length() < totalSize - 2) {
            sb.append('x');
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** multipart/mixed: a short text part and a binary attachment of {@code attachmentSize} bytes in base64. */
    private static byte[] attachmentMessage(int attachmentSize) {
        byte[] attachment = new byte[attachmentSize];
        new Random(42).nextBytes(attachment);
        String boundary = "----=_Part_0_1234567890.1700000000000";
        StringBuilder sb = new StringBuilder(headers("Benchmark mail with a 1 MB attachment",
            "multipart/mixed; boundary=\"" + boundary + "\""));
        sb.append("\r\n--").append(boundary).append("\r\n")
            .append("Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n")
            .append("Please find the report attached.\r\n")
            .append("\r\n--").append(boundary).append("\r\n")
            .append("Content-Type: application/octet-stream; name=\"report.bin\"\r\n")
            .append("Content-Disposition: attachment; filename=\"report.bin\"\r\n")
            .append("Content-Transfer-Encoding: base64\r\n\r\n")
            .append(Base64.getMimeEncoder().encodeToString(attachment))
            .append("\r\n\r\n--").append(boundary).append("--\r\n");
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }
}
