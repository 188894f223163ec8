package org.jameskvs.james.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import javax.mail.internet.MimeMessage;

import org.apache.james.core.MailAddress;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageInputStreamSource;
import org.apache.james.server.core.MimeMessageSource;
import org.apache.james.server.core.MimeMessageWrapper;
import org.apache.mailet.Mail;
import org.junit.jupiter.api.Test;

/**
 * The MIME bytes {@link MailCodec#encode} stores for a James {@link MimeMessageWrapper} are those of
 * the wrapper's own {@code writeTo}, byte for byte, whether or not the header parse is skipped
 * ({@link UnparsedMimeWriter}); and for a plain source it is skipped.
 */
class UnparsedMimeWriterTest {

    /** A modification James's mailets may make before the mail is enqueued (the same on both twins). */
    private record Change(String label, ThrowingConsumer change) {
    }

    private interface ThrowingConsumer {
        void accept(MimeMessage message) throws Exception;
    }

    private static final List<Change> CHANGES = List.of(
        new Change("none", message -> { }),
        new Change("removeHeader bcc (absent)", message -> message.removeHeader("Bcc")),
        new Change("removeHeader present", message -> message.removeHeader("X-Remove-Me")),
        new Change("setHeader", message -> message.setHeader("X-Set", "value 1")),
        new Change("addHeader", message -> message.addHeader("Received", "from a by b; Tue, 24 Nov 2026 21:00:00 +0000")),
        new Change("headers read only", message -> message.getHeader("Subject")),
        new Change("saveChanges by the mailet", message -> {
            message.setHeader("X-Saved", "yes");
            message.saveChanges();
        }));

    @Test
    void writesWhatWriteToWritesForPlainAndOtherSources() throws Exception {
        Random random = new Random(20261124);
        int plainTaken = 0;
        int cases = 0;
        int refused = 0;
        for (int i = 0; i < 400; i++) {
            byte[] raw = randomMessage(random);
            boolean sourceBytesPlain = UnparsedMimeWriter.plainHeaderEnd(raw, 0, raw.length) >= 0;
            for (Change change : CHANGES) {
                for (Function<byte[], MimeMessageSource> kind : sourceKinds()) {
                    MimeMessageWrapper reference = new MimeMessageWrapper(kind.apply(raw));
                    MimeMessageWrapper ours = new MimeMessageWrapper(kind.apply(raw));
                    boolean changed = apply(change, reference);
                    assertThat(apply(change, ours)).isEqualTo(changed);
                    if (!changed) {
                        continue; // the change is not possible on this message (both refused it alike)
                    }
                    byte[] expected;
                    try {
                        expected = writeTo(reference);
                    } catch (Exception e) { // e.g. saveChanges meets a Content-Type it cannot parse
                        assertThatThrownBy(() -> MailCodec.encode(mail(ours))).isInstanceOf(e.getClass());
                        refused++;
                        continue;
                    }

                    UnparsedMimeWriter.Plain plain = UnparsedMimeWriter.plain(ours);
                    assertThat(plain != null).as("plain %s", new String(raw, StandardCharsets.ISO_8859_1))
                        .isEqualTo(sourceBytesPlain);
                    byte[] encoded = MailCodec.encode(mail(ours));

                    assertThat(mimeTail(encoded, expected.length)).as("case %d, %s: %s", i, change.label(),
                        new String(raw, StandardCharsets.ISO_8859_1)).isEqualTo(expected);
                    if (plain != null) {
                        plainTaken++;
                    }
                    cases++;
                }
            }
        }
        assertThat(plainTaken).as("cases through the plain path").isGreaterThan(cases / 4);
        assertThat(cases - plainTaken).as("cases through writeTo").isGreaterThan(cases / 10);
        assertThat(refused).as("cases writeTo refused, encode too").isPositive();
    }

    @Test
    void plainUnmodifiedMessageIsWrittenFromOneReadOfItsSourceWithoutParsingIt() throws Exception {
        byte[] raw = ("Return-Path: <a@example.com>\r\nReceived: from x by y;\r\n\tTue, 24 Nov 2026 21:00:00 +0000\r\n"
            + "From: a@example.com\r\nTo: b@example.com\r\nSubject: one read\r\n"
            + "Date: Tue, 24 Nov 2026 21:00:00 +0000\r\nMessage-ID: <1@example.com>\r\n\r\nbody\r\n")
            .getBytes(StandardCharsets.US_ASCII);
        AtomicInteger reads = new AtomicInteger();
        MimeMessageSource counting = new MimeMessageSource() {
            @Override
            public String getSourceId() {
                return "counting";
            }

            @Override
            public InputStream getInputStream() {
                reads.incrementAndGet();
                return new ByteArrayInputStream(raw);
            }

            @Override
            public long getMessageSize() {
                return raw.length;
            }
        };
        MimeMessageWrapper message = new MimeMessageWrapper(counting);

        byte[] encoded = MailCodec.encode(mail(message));

        // writeTo alone reads the source once, and MimeMessage.getSize (the buffer's size hint) once
        // more to parse the headers: two reads and two parses of the headers before.
        assertThat(reads.get()).isEqualTo(1);
        assertThat(mimeTail(encoded, raw.length)).isEqualTo(raw);
        assertThat(message.isHeaderModified()).isFalse();
    }

    @Test
    void decodedMailReEncodedUnmodifiedIsNeverReadThroughAStream() throws Exception {
        byte[] raw = ("From: a@example.com\r\nTo: b@example.com\r\nSubject: again\r\n"
            + "Message-ID: <2@example.com>\r\n\r\nbody\r\n").getBytes(StandardCharsets.US_ASCII);
        Mail decoded = MailCodec.decode(MailCodec.encode(mail(new MimeMessageWrapper(new BytesMimeMessageSource("b", raw, 0, raw.length)))), "d");

        assertThat(UnparsedMimeWriter.plain(decoded.getMessage())).isNotNull();
        assertThat(mimeTail(MailCodec.encode(decoded), raw.length)).isEqualTo(raw);
    }

    @Test
    void headerSectionsThatJamesWouldRewriteAreNotPlain() {
        assertThat(end("A: b\r\n\r\nx")).isEqualTo(8);
        assertThat(end("A: b\r\n c\r\n\td\r\n\r\n")).isEqualTo(16);
        assertThat(end("A: b\n\nx")).isEqualTo(-1);             // LF line ends
        assertThat(end("A: b\r\nB: c\rd\r\n\r\n")).isEqualTo(-1); // CR alone
        assertThat(end("A: b\r\n")).isEqualTo(-1);               // no end of the header section
        assertThat(end("\r\nbody")).isEqualTo(-1);               // no headers at all
        assertThat(end(" A: b\r\n\r\n")).isEqualTo(-1);          // continuation first
        assertThat(end("A: b\r\n \t \r\n\r\n")).isEqualTo(-1);    // blanks only
        assertThat(end("From a@b\r\nA: b\r\n\r\n")).isEqualTo(-1); // no colon
        assertThat(end("A: \u00e9\r\n\r\n")).isEqualTo(-1);       // 8-bit
        assertThat(end("A: \u0001\r\n\r\n")).isEqualTo(-1);       // control
    }

    private static int end(String headers) {
        byte[] b = headers.getBytes(StandardCharsets.ISO_8859_1);
        return UnparsedMimeWriter.plainHeaderEnd(b, 0, b.length);
    }

    private static boolean apply(Change change, MimeMessage message) {
        try {
            change.change().accept(message);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private static List<Function<byte[], MimeMessageSource>> sourceKinds() {
        return List.of(
            raw -> new BytesMimeMessageSource("bytes", pad(raw), 3, raw.length),
            raw -> {
                try {
                    return MimeMessageInputStreamSource.create("stream", new ByteArrayInputStream(raw));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
    }

    /** The bytes at an offset within a larger array, as in a decoded KVS body. */
    private static byte[] pad(byte[] raw) {
        byte[] padded = new byte[raw.length + 5];
        padded[0] = 'x';
        System.arraycopy(raw, 0, padded, 3, raw.length);
        padded[padded.length - 1] = 'y';
        return padded;
    }

    /** A mail holding this very message (the builder's mimeMessage would hold a copy of it). */
    private static Mail mail(MimeMessageWrapper message) throws Exception {
        MailImpl mail = MailImpl.builder().name("m").sender(new MailAddress("s@example.com"))
            .addRecipient(new MailAddress("r@example.com")).build();
        mail.setMessageNoCopy(message);
        assertThat(mail.getMessage()).isSameAs(message);
        return mail;
    }

    private static byte[] writeTo(MimeMessage message) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        message.writeTo(out);
        return out.toByteArray();
    }

    /** The MIME bytes of an encoded mail: what follows the envelope (the layout's tail). */
    private static byte[] mimeTail(byte[] encoded, int expectedLength) throws Exception {
        Mail withoutMessage = MailImpl.builder().name("m").sender(new MailAddress("s@example.com"))
            .addRecipient(new MailAddress("r@example.com")).build();
        int envelope = MailCodec.encode(withoutMessage).length; // same envelope, then "no message" (1 byte)
        return java.util.Arrays.copyOfRange(encoded, envelope, encoded.length);
    }

    private static final String[] NAMES = {"From", "To", "Cc", "Subject", "X-Mailer", "Received", "X-Remove-Me",
        "Content-Type", "MIME-Version", "Bcc", "Reply-To"};

    /** A message with mostly plain headers, and now and then what makes them not plain. */
    private static byte[] randomMessage(Random random) {
        StringBuilder s = new StringBuilder();
        String eol = random.nextInt(10) == 0 ? "\n" : "\r\n";
        if (random.nextInt(30) == 0) {
            s.append(" leading continuation").append(eol);
        }
        s.append("Date: Tue, 24 Nov 2026 21:00:00 +0000").append(eol);
        s.append("Message-ID: <").append(random.nextInt(1_000_000)).append("@example.com>").append(eol);
        int headers = 1 + random.nextInt(12);
        for (int h = 0; h < headers; h++) {
            String name = NAMES[random.nextInt(NAMES.length)];
            s.append(name).append(random.nextInt(4) == 0 ? ":" : ": ").append(value(random));
            if (random.nextInt(5) == 0) {
                s.append(eol).append(random.nextBoolean() ? "\t" : "    ").append(value(random));
            }
            s.append(eol);
            switch (random.nextInt(40)) {
                case 0 -> s.append("No colon here").append(eol);
                case 1 -> s.append("   ").append(eol);
                case 2 -> s.append("X-Eight: caf\u00e9").append(eol);
                case 3 -> s.append("X-Cr: a\rb").append(eol);
                default -> { }
            }
        }
        if (random.nextInt(25) != 0) {
            s.append(eol);
            int body = random.nextInt(2000);
            for (int b = 0; b < body; b++) {
                int c = random.nextInt(100);
                s.append(c < 3 ? '\r' : c < 6 ? '\n' : c < 8 ? (char) (0x80 + random.nextInt(128)) : (char) (' ' + random.nextInt(95)));
            }
        }
        return s.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String value(Random random) {
        int length = random.nextInt(60);
        StringBuilder v = new StringBuilder();
        for (int i = 0; i < length; i++) {
            v.append(random.nextInt(8) == 0 ? ' ' : (char) ('!' + random.nextInt(94)));
        }
        return v.toString();
    }
}
