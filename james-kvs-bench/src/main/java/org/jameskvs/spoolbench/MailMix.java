package org.jameskvs.spoolbench;

import java.nio.charset.StandardCharsets;

/**
 * The benchmark's mail mix: {@link #PAPER} (the paper's): 70 % of the mails are 1 KB, 30 % are
 * 10 KB; mail {@code i} is 10 KB when {@code i % 10 >= 7}, so every run of ten consecutive mails holds
 * exactly the mix. {@link #ONE_KB}: every mail 1 KB.
 * Sizes are of the message as sent after DATA (headers and body, without the terminating dot line).
 * Bodies are built once; only the Message-ID header changes from mail to mail.
 */
public final class MailMix {
    public static final int SMALL = 1024;
    public static final int LARGE = 10 * 1024;
    public static final String FROM = "sender@kvs-load.test";
    public static final String TO = "rcpt@sink.test";

    public static final String PAPER = "paper";
    public static final String ONE_KB = "1k";

    private final byte[] smallBody;
    private final byte[] largeBody;
    private final boolean paper;

    /** @param name {@link #PAPER} or {@link #ONE_KB} */
    public MailMix(String name) {
        if (!PAPER.equals(name) && !ONE_KB.equals(name)) {
            throw new IllegalArgumentException("mix must be " + PAPER + " or " + ONE_KB + ", got " + name);
        }
        this.paper = PAPER.equals(name);
        this.smallBody = body(SMALL);
        this.largeBody = body(LARGE);
    }

    public boolean isLarge(long i) {
        return paper && i % 10 >= 7;
    }

    /** Headers up to and including the blank line, for this Message-ID. */
    public static byte[] headers(String messageId, long i) {
        return ("From: <" + FROM + ">\r\n"
            + "To: <" + TO + ">\r\n"
            + "Subject: spool benchmark " + i + "\r\n"
            + "Message-ID: " + messageId + "\r\n"
            + "MIME-Version: 1.0\r\n"
            + "Content-Type: text/plain; charset=us-ascii\r\n"
            + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The body for mail {@code i} given its header length, padded so that headers + body = its size. */
    public byte[] body(long i) {
        return isLarge(i) ? largeBody : smallBody;
    }

    /** Header length is about 200 bytes and varies by a few; the body is sized for a 200-byte header. */
    static final int NOMINAL_HEADER_BYTES = 200;

    private static byte[] body(int size) {
        int target = size - NOMINAL_HEADER_BYTES;
        StringBuilder sb = new StringBuilder(target + 80);
        String line = "The quick brown fox jumps over the lazy dog 0123456789 spool benchmark text.";
        while (sb.length() + line.length() + 2 <= target) {
            sb.append(line).append("\r\n");
        }
        while (sb.length() < target - 2) {
            sb.append('x');
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }
}
