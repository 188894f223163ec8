package org.jameskvs.delivery;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;

import javax.mail.Session;
import javax.mail.internet.MimeMessage;

import org.apache.james.core.MailAddress;
import org.apache.james.server.core.MailImpl;

/** Small real mails for the tests, each with its own Message-ID (what the target counts). */
public final class TestMails {
    private TestMails() {
    }

    public static String messageId(String tag, int i) {
        return "<" + tag + "-" + i + "@lanes.test>";
    }

    public static MimeMessage message(String messageId, String body) throws Exception {
        String raw = "From: sender@origin.test\r\nTo: someone@dest.test\r\nSubject: lane test\r\nMessage-ID: " + messageId
            + "\r\n\r\n" + body + "\r\n";
        return new MimeMessage(Session.getInstance(new Properties()), new ByteArrayInputStream(raw.getBytes(StandardCharsets.UTF_8)));
    }

    public static MailImpl mail(String name, String messageId, String... recipients) throws Exception {
        MailImpl.Builder builder = MailImpl.builder().name(name).sender("sender@origin.test");
        for (String recipient : recipients) {
            builder.addRecipient(new MailAddress(recipient));
        }
        return builder.mimeMessage(message(messageId, "hello " + List.of(recipients))).build();
    }
}
