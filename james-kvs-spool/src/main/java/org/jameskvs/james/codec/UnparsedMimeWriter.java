package org.jameskvs.james.codec;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import javax.mail.MessagingException;
import javax.mail.internet.MimeMessage;

import org.apache.james.server.core.InternetHeadersInputStream;
import org.apache.james.server.core.MimeMessageSource;
import org.apache.james.server.core.MimeMessageWrapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the MIME bytes of a James {@link MimeMessageWrapper} exactly as its {@code writeTo} does,
 * without parsing the source's header section into header objects and writing them back.
 *
 * <p>James's {@code MimeMessageWrapper.writeTo}, for a message whose body was not modified, parses the
 * source's headers ({@code MailHeaders}), then writes either those (headers not modified) or the
 * message's own modified headers (after {@code saveChanges} when not saved yet), then copies the
 * source's bytes after the header section. When the header section is "plain" (printable US-ASCII and
 * tabs only, every line ended by CRLF, no line starting the section with a space or tab, every header
 * with a colon, no line of blanks only, ended by an empty line), that parse-and-write gives back the
 * source's header bytes unchanged, and the header section ends right after the first empty line. Then:
 * <ul>
 *   <li>headers not modified: the output is the source, byte for byte: it is copied;</li>
 *   <li>headers modified: {@code saveChanges} when not saved (as James), the message's header lines
 *       through James's own {@link InternetHeadersInputStream}, then the source after the empty line.</li>
 * </ul>
 * Any other case (another class, a modified body, no source, a header section that is not plain, the
 * fields not reachable) returns false having written nothing, and the caller uses {@code writeTo}.
 */
final class UnparsedMimeWriter {
    private static final Logger LOGGER = LoggerFactory.getLogger(UnparsedMimeWriter.class);
    private static final String[] NO_HEADER_IGNORED = new String[0];
    /** {@code MimeMessageWrapper.source} and {@code MimeMessage.saved} (protected); null: not reachable. */
    private static final VarHandle SOURCE;
    private static final VarHandle SAVED;

    static {
        VarHandle source = null;
        VarHandle saved = null;
        try {
            source = MethodHandles.privateLookupIn(MimeMessageWrapper.class, MethodHandles.lookup())
                .findVarHandle(MimeMessageWrapper.class, "source", MimeMessageSource.class);
            saved = MethodHandles.privateLookupIn(MimeMessage.class, MethodHandles.lookup())
                .findVarHandle(MimeMessage.class, "saved", boolean.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOGGER.info("MimeMessageWrapper's source not reachable ({}): mails are written with writeTo", e.toString());
            source = null;
            saved = null;
        }
        SOURCE = source;
        SAVED = saved;
    }

    private UnparsedMimeWriter() {
    }

    /** The source bytes of a message this class can write, with where its header section ends. */
    record Plain(MimeMessageWrapper message, byte[] buffer, int offset, int length, int bodyStart) {
    }

    /** @return the message's plain source, or null: write it with {@code writeTo}. Reads, writes nothing. */
    static Plain plain(MimeMessage message) throws IOException {
        if (SOURCE == null || message == null || message.getClass() != MimeMessageWrapper.class) {
            return null; // a subclass may write otherwise
        }
        MimeMessageWrapper wrapper = (MimeMessageWrapper) message;
        MimeMessageSource source = (MimeMessageSource) SOURCE.get(wrapper);
        if (source == null || wrapper.isBodyModified()) {
            return null;
        }
        byte[] buffer;
        int offset;
        int length;
        if (source instanceof BytesMimeMessageSource bytes) {
            buffer = bytes.buffer();
            offset = bytes.offset();
            length = bytes.length();
        } else {
            try (InputStream in = source.getInputStream()) {
                buffer = in.readAllBytes();
            }
            offset = 0;
            length = buffer.length;
        }
        int bodyStart = plainHeaderEnd(buffer, offset, length);
        return bodyStart < 0 ? null : new Plain(wrapper, buffer, offset, length, bodyStart);
    }

    /** Writes what {@code plain.message().writeTo(out)} would write. */
    static void writeTo(Plain plain, OutputStream out) throws IOException, MessagingException {
        MimeMessageWrapper message = plain.message();
        if (!message.isHeaderModified()) {
            out.write(plain.buffer(), plain.offset(), plain.length());
            return;
        }
        if (!(boolean) SAVED.get(message)) {
            message.saveChanges(); // as James's writeTo (JAMES-1320)
        }
        new InternetHeadersInputStream(message.getNonMatchingHeaderLines(NO_HEADER_IGNORED)).transferTo(out);
        out.write(plain.buffer(), plain.bodyStart(), plain.offset() + plain.length() - plain.bodyStart());
    }

    /**
     * @return the index just after the empty line ending a plain header section (see the class
     *     comment), or -1 when the section is not plain or has no end
     */
    static int plainHeaderEnd(byte[] b, int offset, int length) {
        int end = offset + length;
        int i = offset;
        boolean firstLine = true;
        while (i < end) {
            int lineStart = i;
            boolean colon = false;
            boolean blanksOnly = true;
            while (i < end && b[i] != '\r') {
                byte c = b[i];
                if (c == ':') {
                    colon = true;
                }
                if (c != ' ' && c != '\t') {
                    blanksOnly = false;
                    if (c < 0x21 || c > 0x7E) {
                        return -1; // control, LF alone, 8-bit: James's parse would change it
                    }
                }
                i++;
            }
            if (i + 1 >= end || b[i + 1] != '\n') {
                return -1; // no CRLF (CR alone, or the end): not plain
            }
            int lineLength = i - lineStart;
            i += 2;
            if (lineLength == 0) {
                return firstLine ? -1 : i; // the empty line ends the section (none at all: not plain)
            }
            if (blanksOnly) {
                return -1; // may end the section (mail.mime.ignorewhitespacelines)
            }
            boolean continuation = b[lineStart] == ' ' || b[lineStart] == '\t';
            if (continuation ? firstLine : !colon) {
                return -1;
            }
            firstLine = false;
        }
        return -1;
    }
}
