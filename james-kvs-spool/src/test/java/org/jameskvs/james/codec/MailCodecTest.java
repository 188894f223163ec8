package org.jameskvs.james.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.ZonedDateTime;
import java.util.Date;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import javax.mail.Session;
import javax.mail.internet.MimeMessage;

import org.apache.james.core.MailAddress;
import org.apache.james.core.MaybeSender;
import org.apache.james.core.builder.MimeMessageBuilder;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageWrapper;
import org.apache.mailet.Attribute;
import org.apache.mailet.AttributeName;
import org.apache.mailet.AttributeValue;
import org.apache.mailet.DsnParameters;
import org.apache.mailet.Mail;
import org.apache.mailet.PerRecipientHeaders;
import org.junit.jupiter.api.Test;

class MailCodecTest {

    private static MailImpl.Builder mail(String name) throws Exception {
        return MailImpl.builder().name(name)
            .sender(new MailAddress("sender@example.com"))
            .addRecipient(new MailAddress("rcpt@example.com"))
            .mimeMessage(MimeMessageBuilder.mimeMessageBuilder().setSubject("s").setText("hello").build());
    }

    private static Mail roundTrip(Mail mail) throws Exception {
        return MailCodec.decode(MailCodec.encode(mail), "test");
    }

    private static byte[] mimeBytes(MimeMessage message) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        message.writeTo(out);
        return out.toByteArray();
    }

    @Test
    void envelopeSurvives() throws Exception {
        Date lastUpdated = new Date(1_700_000_000_123L);
        MailImpl original = mail("name-é").state("custom-state").errorMessage("boom\nline2")
            .remoteAddr("10.0.0.1").remoteHost("relay.example.com").lastUpdated(lastUpdated)
            .addRecipient(new MailAddress("second@example.com")).build();

        Mail decoded = roundTrip(original);

        assertThat(decoded.getName()).isEqualTo("name-é");
        assertThat(decoded.getMaybeSender()).isEqualTo(MaybeSender.of(new MailAddress("sender@example.com")));
        assertThat(decoded.getRecipients()).containsExactly(new MailAddress("rcpt@example.com"), new MailAddress("second@example.com"));
        assertThat(decoded.getState()).isEqualTo("custom-state");
        assertThat(decoded.getErrorMessage()).isEqualTo("boom\nline2");
        assertThat(decoded.getRemoteAddr()).isEqualTo("10.0.0.1");
        assertThat(decoded.getRemoteHost()).isEqualTo("relay.example.com");
        assertThat(decoded.getLastUpdated()).isEqualTo(lastUpdated);
    }

    @Test
    void nullSenderSurvives() throws Exception {
        MailImpl original = mail("n").sender(MailAddress.nullSender()).build();
        assertThat(roundTrip(original).getMaybeSender()).isEqualTo(MaybeSender.nullSender());
        MailImpl noSender = MailImpl.builder().name("n2").addRecipient("a@b.c").build();
        assertThat(roundTrip(noSender).getMaybeSender()).isEqualTo(MaybeSender.nullSender());
    }

    @Test
    void mailWithoutMessageSurvives() throws Exception {
        MailImpl original = MailImpl.builder().name("no-message").addRecipient("a@b.c").build();
        assertThat(roundTrip(original).getMessage()).isNull();
    }

    @Test
    void fiveThousandRecipientsSurviveInOrder() throws Exception {
        List<MailAddress> recipients = IntStream.range(0, 5000)
            .mapToObj(i -> {
                try {
                    return new MailAddress("user" + i + "@domain" + (i % 7) + ".example");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }).collect(Collectors.toList());
        MailImpl original = MailImpl.builder().name("many").addRecipients(recipients).build();
        assertThat(roundTrip(original).getRecipients()).containsExactlyElementsOf(recipients);
    }

    @Test
    void perRecipientHeadersSurvive() throws Exception {
        MailAddress a = new MailAddress("a@example.com");
        MailAddress b = new MailAddress("b@example.com");
        PerRecipientHeaders.Header h1 = PerRecipientHeaders.Header.builder().name("X-One").value("1").build();
        PerRecipientHeaders.Header h2 = PerRecipientHeaders.Header.builder().name("X-Two").value("deux é").build();
        MailImpl original = mail("h").addHeaderForRecipient(h1, a).addHeaderForRecipient(h2, a)
            .addHeaderForRecipient(h2, b).build();

        PerRecipientHeaders decoded = roundTrip(original).getPerRecipientSpecificHeaders();

        assertThat(decoded.getHeadersForRecipient(a)).containsOnly(h1, h2);
        assertThat(decoded.getHeadersForRecipient(b)).containsOnly(h2);
    }

    @Test
    void everySerializableAttributeTypeSurvives() throws Exception {
        List<Attribute> attributes = List.of(
            Attribute.convertToAttribute("string", "value"),
            Attribute.convertToAttribute("boolean", true),
            Attribute.convertToAttribute("int", 42),
            Attribute.convertToAttribute("long", 42L << 40),
            Attribute.convertToAttribute("float", 1.5f),
            Attribute.convertToAttribute("double", 2.25d),
            Attribute.convertToAttribute("bytes", new byte[] {0, 1, (byte) 0xFF}),
            Attribute.convertToAttribute("date", ZonedDateTime.parse("2024-01-02T03:04:05.678+01:00[Europe/Paris]")),
            Attribute.convertToAttribute("url", new URL("https://james.apache.org/x?y=z")),
            new Attribute(AttributeName.of("list"), AttributeValue.of(List.<AttributeValue<?>>of(AttributeValue.of("a"), AttributeValue.of(3)))),
            new Attribute(AttributeName.of("map"), AttributeValue.of(Map.<String, AttributeValue<?>>of("k", AttributeValue.of(7L)))),
            new Attribute(AttributeName.of("optional"), AttributeValue.of(Optional.of(AttributeValue.of("inside")))),
            new Attribute(AttributeName.of("empty-optional"), AttributeValue.of(Optional.<AttributeValue<String>>empty())));
        MailImpl original = mail("attrs").addAttributes(attributes).build();

        Mail decoded = roundTrip(original);

        for (Attribute attribute : attributes) {
            if (attribute.getValue().value() instanceof byte[]) {
                // AttributeValue.equals compares arrays by identity: compare the content.
                assertThat((byte[]) decoded.getAttribute(attribute.getName()).get().getValue().value())
                    .isEqualTo((byte[]) attribute.getValue().value());
                continue;
            }
            assertThat(decoded.getAttribute(attribute.getName())).as(attribute.getName().asString()).contains(attribute);
        }
    }

    @Test
    void unserializableAttributeIsDroppedNotFatal() throws Exception {
        MailImpl original = mail("u")
            .addAttribute(new Attribute(AttributeName.of("opaque"), AttributeValue.ofUnserializable(new Object())))
            .addAttribute(Attribute.convertToAttribute("kept", "yes"))
            .build();

        Mail decoded = roundTrip(original);

        assertThat(decoded.getAttribute(AttributeName.of("opaque"))).isEmpty();
        assertThat(decoded.getAttribute(AttributeName.of("kept"))).contains(Attribute.convertToAttribute("kept", "yes"));
    }

    @Test
    void dsnParametersSurvive() throws Exception {
        DsnParameters dsn = DsnParameters.builder()
            .envId(DsnParameters.EnvId.of("434554-55445-33443"))
            .ret(DsnParameters.Ret.HDRS)
            .addRcptParameter(new MailAddress("bob@apache.org"), DsnParameters.RecipientDsnParameters.of(EnumSet.of(DsnParameters.Notify.FAILURE), new MailAddress("eric@apache.org")))
            .build().get();
        MailImpl original = mail("dsn").build();
        original.setDsnParameters(dsn);

        assertThat(roundTrip(original).dsnParameters()).contains(dsn);
    }

    @Test
    void eightBitBodyBytesAreUnchanged() throws Exception {
        byte[] raw = ("From: a@example.com\r\nTo: b@example.com\r\nSubject: 8bit\r\nMIME-Version: 1.0\r\n"
            + "Content-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
        byte[] body = new byte[256 + 2];
        for (int i = 0; i < 256; i++) {
            body[i] = (byte) i;
        }
        body[256] = '\r';
        body[257] = '\n';
        byte[] message = concat(raw, body);
        MimeMessage mime = new MimeMessage(Session.getDefaultInstance(new Properties()), new ByteArrayInputStream(message));
        MailImpl original = mail("8bit").mimeMessage(mime).build();
        byte[] expected = mimeBytes(original.getMessage());

        Mail decoded = roundTrip(original);

        assertThat(mimeBytes(decoded.getMessage())).isEqualTo(expected);
        assertThat(expected).endsWith(body);
    }

    @Test
    void twentyMegabyteAttachmentSurvivesByteForByte() throws Exception {
        byte[] attachment = new byte[20 * 1024 * 1024];
        new java.util.Random(42).nextBytes(attachment);
        MimeMessage mime = MimeMessageBuilder.mimeMessageBuilder()
            .setSubject("big")
            .setMultipartWithBodyParts(
                MimeMessageBuilder.bodyPartBuilder().data("see attached"),
                MimeMessageBuilder.bodyPartBuilder().data(attachment).filename("blob.bin").type("application/octet-stream"))
            .build();
        MailImpl original = mail("big").mimeMessage(mime).build();
        byte[] expected = mimeBytes(original.getMessage());

        byte[] encoded = MailCodec.encode(original);
        Mail decoded = MailCodec.decode(encoded, "big");

        assertThat(encoded.length).isLessThan(expected.length + 1024);
        assertThat(java.util.Arrays.equals(mimeBytes(decoded.getMessage()), expected)).isTrue();
        assertThat(decoded.getMessageSize()).isEqualTo(expected.length);
    }

    @Test
    void garbageIsRejectedWithMessagingException() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MailCodec.decode(new byte[] {'J', 'K', 'M', 1, 0, 0}, "x"))
            .isInstanceOf(javax.mail.MessagingException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MailCodec.decode("nope".getBytes(StandardCharsets.US_ASCII), "x"))
            .isInstanceOf(javax.mail.MessagingException.class);
    }

    // --- writeMime: an unmodified wrapper is copied from its source, anything else goes through writeTo

    private static final String CRLF_MIME = "Received: from client by james\r\n"
        + "Subject: hello\r\n"
        + "X-Folded: a\r\n b\r\n"
        + "Content-Type: text/plain\r\n"
        + "\r\n"
        + "body line 1\r\nbody line 2\r\n";

    /** The MIME text as a source that serves its bytes as they are. */
    private static BytesMimeMessageSource source(String name, String mime) {
        byte[] bytes = mime.getBytes(StandardCharsets.US_ASCII);
        return new BytesMimeMessageSource(name, bytes, 0, bytes.length);
    }

    private static MimeMessageWrapper wrapper(String mime) throws Exception {
        return new MimeMessageWrapper(source("src", mime));
    }

    /** The MIME tail of an encoded mail (what follows the hasMessage byte). */
    private static byte[] tail(byte[] encoded, int mimeLength) {
        return java.util.Arrays.copyOfRange(encoded, encoded.length - mimeLength, encoded.length);
    }

    @Test
    void anUnmodifiedWrappersBytesAreWhatWriteToGivesForCrlfMail() throws Exception {
        byte[] viaWriteTo = mimeBytes(wrapper(CRLF_MIME));
        ByteArrayOutputStream fast = new ByteArrayOutputStream();
        MailCodec.writeMime(wrapper(CRLF_MIME), fast);
        assertThat(fast.toByteArray()).isEqualTo(viaWriteTo).isEqualTo(CRLF_MIME.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void anUnmodifiedWrapperIsCopiedAsItCameAndWrittenOutAsWriteToWouldAfterDecoding() throws Exception {
        // A bare LF ends one header line: writeTo writes it with CRLF, the copy keeps it; so the copy
        // is the source's bytes (the fast path was taken), and the decoded mail writes out as James would.
        String mime = "Subject: hello\nX-Other: x\r\n\r\nbody\r\n";
        byte[] raw = mime.getBytes(StandardCharsets.US_ASCII);
        byte[] asJamesWritesIt = mimeBytes(wrapper(mime));
        assertThat(asJamesWritesIt).isNotEqualTo(raw);
        // setMessageContent wraps the source as it is (as SMTP intake and a queue's decode do);
        // the builder's mimeMessage(...) would copy the message through writeTo first
        MailImpl lf = mail("lf").build();
        lf.setMessageContent(source("lf", mime));
        assertThat(lf.getMessage()).isInstanceOf(MimeMessageWrapper.class);

        byte[] encoded = MailCodec.encode(lf);
        assertThat(tail(encoded, mime.length())).isEqualTo(mime.getBytes(StandardCharsets.US_ASCII));
        assertThat(mimeBytes(MailCodec.decode(encoded, "lf").getMessage())).isEqualTo(asJamesWritesIt);
    }

    @Test
    void aModifiedWrapperGoesThroughWriteTo() throws Exception {
        MimeMessageWrapper modified = wrapper(CRLF_MIME);
        modified.setHeader("X-Added", "by a mailet");
        assertThat(modified.isModified()).isTrue();
        byte[] expected = mimeBytes(modified);
        assertThat(new String(expected, StandardCharsets.US_ASCII)).contains("X-Added: by a mailet");

        byte[] encoded = MailCodec.encode(mail("mod").mimeMessage(modified).build());
        assertThat(tail(encoded, expected.length)).isEqualTo(expected);
        assertThat(mimeBytes(MailCodec.decode(encoded, "mod").getMessage())).isEqualTo(expected);
    }

    @Test
    void aWrapperWhoseContentWasReadButNotChangedKeepsItsBytes() throws Exception {
        MimeMessageWrapper read = wrapper(CRLF_MIME);
        assertThat(read.getContent()).isEqualTo("body line 1\r\nbody line 2\r\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        MailCodec.writeMime(read, out);
        assertThat(out.toByteArray()).isEqualTo(CRLF_MIME.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void aMailReadBackFromAQueueIsEncodedAgainByteForByte() throws Exception {
        // the spooler's enqueue into outgoing: a mail decoded from the spool, unmodified, encoded again
        MailImpl received = mail("again").build();
        received.setMessageContent(source("again", CRLF_MIME));
        byte[] first = MailCodec.encode(received);
        Mail decoded = MailCodec.decode(first, "again");
        byte[] second = MailCodec.encode(decoded);
        assertThat(tail(second, CRLF_MIME.length())).isEqualTo(CRLF_MIME.getBytes(StandardCharsets.US_ASCII));
        assertThat(mimeBytes(MailCodec.decode(second, "again").getMessage()))
            .isEqualTo(CRLF_MIME.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] result = new byte[a.length + b.length];
        System.arraycopy(a, 0, result, 0, a.length);
        System.arraycopy(b, 0, result, a.length, b.length);
        return result;
    }
}
