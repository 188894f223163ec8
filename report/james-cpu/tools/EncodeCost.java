import java.io.ByteArrayInputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import org.apache.james.core.MailAddress;
import org.apache.james.server.core.MailImpl;
import org.apache.james.server.core.MimeMessageInputStreamSource;
import org.apache.james.server.core.MimeMessageWrapper;
import org.jameskvs.james.codec.MailCodec;

/** CPU per MailCodec.encode of the benchmark's 1 KB mail: as received (unmodified) and as re-enqueued to outgoing (bcc removed, saveChanges). */
public class EncodeCost {
    public static void main(String[] a) throws Exception {
        StringBuilder body = new StringBuilder();
        while (body.length() < 1024) body.append("The quick brown fox jumps over the lazy dog 0123456789 abcdefghij\r\n");
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int n = Integer.parseInt(a[0]);
        for (int round = 0; round < 5; round++) {
            long cpuReceived = 0, cpuOutgoing = 0;
            for (int i = 0; i < n; i++) {
                byte[] raw = ("Received: from localhost (localhost [127.0.0.1])\r\n          by james (JAMES SMTP Server ) with ESMTP ID 1234\r\n"
                    + "          for <rcpt@example.net>;\r\n          Tue, 24 Nov 2026 21:00:00 +0000 (UTC)\r\n"
                    + "From: <sender@example.com>\r\nTo: <rcpt@example.net>\r\nSubject: spool benchmark " + i + "\r\n"
                    + "Message-ID: <" + i + "@bench>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n" + body)
                    .getBytes(StandardCharsets.ISO_8859_1);
                MailImpl mail = MailImpl.builder().name("m" + i).sender(new MailAddress("sender@example.com"))
                    .addRecipient(new MailAddress("rcpt@example.net")).build();
                MimeMessageInputStreamSource src = MimeMessageInputStreamSource.create("s" + i, new ByteArrayInputStream(raw));
                mail.setMessageNoCopy(new MimeMessageWrapper(src));
                long c0 = t.getCurrentThreadCpuTime();
                byte[] enc = MailCodec.encode(mail);
                long c1 = t.getCurrentThreadCpuTime();
                MailImpl decoded = MailCodec.decode(enc, "d" + i);
                decoded.getMessage().removeHeader("bcc");
                long c2 = t.getCurrentThreadCpuTime();
                MailCodec.encode(decoded);
                long c3 = t.getCurrentThreadCpuTime();
                cpuReceived += c1 - c0; cpuOutgoing += c3 - c2;
                src.dispose();
            }
            System.out.printf("round %d: encode as received %.1f us, encode to outgoing %.1f us (CPU per mail)%n", round, cpuReceived / 1e3 / n, cpuOutgoing / 1e3 / n);
        }
    }
}
