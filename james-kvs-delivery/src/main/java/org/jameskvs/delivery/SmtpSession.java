package org.jameskvs.delivery;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.mail.MessagingException;
import javax.mail.internet.MimeMessage;

import org.apache.james.core.MailAddress;

/**
 * One SMTP client connection to a destination's MX, kept open for several mails (connection reuse):
 * {@link #open} connects and greets, {@link #send} runs one MAIL/RCPT/DATA transaction, {@link #close}
 * says QUIT. Each phase has its own timeout (connect, greeting, command, data). Written here rather than
 * through JavaMail so that every reply reaches the lane's shaping rules as code and text, and so that
 * a failed transaction leaves the connection usable (RSET) while a 421 ends it. Where the server's
 * EHLO offers PIPELINING (RFC 2920), MAIL, every RCPT and DATA go out in one write and their replies
 * are read afterwards: one round trip instead of 2 + recipients.
 */
public final class SmtpSession implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final LaneDeliveryConfig config;
    private int transactions;
    private boolean pipelining;

    private SmtpSession(Socket socket, LaneDeliveryConfig config) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
        this.config = config;
    }

    /** The address and port this session is connected to. */
    public InetSocketAddress remoteSocketAddress() {
        return new InetSocketAddress(socket.getInetAddress(), socket.getPort());
    }

    /** A session with the first of {@code targets} (address and port) that connects and greets. */
    public static SmtpSession open(List<InetSocketAddress> targets, LaneDeliveryConfig config) throws SmtpFailure {
        if (targets.isEmpty()) {
            throw new SmtpFailure(SmtpReply.noReply("no MX address"), true, null);
        }
        SmtpFailure last = null;
        for (InetSocketAddress target : targets) {
            try {
                return openOne(target.getAddress(), target.getPort(), config);
            } catch (SmtpFailure e) {
                last = e;
            }
        }
        throw last;
    }

    private static SmtpSession openOne(InetAddress address, int port, LaneDeliveryConfig config) throws SmtpFailure {
        Socket socket = new Socket();
        boolean greeted = false;
        try {
            socket.connect(new InetSocketAddress(address, port), timeout(config.connectTimeout()));
            socket.setTcpNoDelay(true);
            SmtpSession session = new SmtpSession(socket, config);
            SmtpReply greeting = session.read(config.greetingTimeout());
            if (greeting.code() != 220) {
                throw new SmtpFailure(greeting, true, null);
            }
            greeted = true;
            SmtpReply ehlo = session.command("EHLO " + config.heloName());
            session.pipelining = ehlo.positive() && offers(ehlo, "PIPELINING");
            if (!ehlo.positive()) {
                if (ehlo.serviceNotAvailable()) {
                    throw new SmtpFailure(ehlo, false, null);
                }
                SmtpReply helo = session.command("HELO " + config.heloName());
                if (!helo.positive()) {
                    throw new SmtpFailure(helo, false, null);
                }
            }
            return session;
        } catch (IOException e) {
            closeQuietly(socket);
            throw new SmtpFailure(SmtpReply.noReply(describe(e) + " (" + address.getHostAddress() + ":" + port + ")"),
                !greeted, e);
        } catch (SmtpFailure e) {
            closeQuietly(socket);
            throw e;
        }
    }

    /**
     * Sends one mail. Returns per-recipient results; throws when the connection broke or the server
     * said 421 (every recipient is then still to be tried: nothing was accepted).
     */
    public TransactionResult send(String sender, List<MailAddress> recipients, MimeMessage message) throws SmtpFailure {
        transactions++;
        try {
            if (pipelining) { // MAIL, RCPT..., DATA in one write (DATA last, as RFC 2920 allows)
                write("MAIL FROM:<" + sender + ">");
                for (MailAddress recipient : recipients) {
                    write("RCPT TO:<" + recipient.asString() + ">");
                }
                write("DATA");
                out.flush();
            }
            SmtpReply mail = checked(pipelining ? read(config.commandTimeout()) : command("MAIL FROM:<" + sender + ">"));
            List<MailAddress> accepted = new ArrayList<>();
            List<MailAddress> temporary = new ArrayList<>();
            List<MailAddress> permanent = new ArrayList<>();
            Map<MailAddress, SmtpReply> refusals = new LinkedHashMap<>();
            SmtpReply decisive = null;
            if (!mail.positive() && !pipelining) {
                reset();
                return allRecipients(recipients, mail);
            }
            for (MailAddress recipient : recipients) {
                SmtpReply rcpt = checked(pipelining ? read(config.commandTimeout()) : command("RCPT TO:<" + recipient.asString() + ">"));
                if (rcpt.positive() && mail.positive()) {
                    accepted.add(recipient);
                } else {
                    (rcpt.permanent() ? permanent : temporary).add(recipient);
                    if (mail.positive()) { // after a refused MAIL the RCPT replies say nothing of the recipient
                        refusals.put(recipient, rcpt);
                    }
                    decisive = rcpt;
                }
            }
            if (accepted.isEmpty() && !pipelining) {
                reset();
                return new TransactionResult(List.of(), temporary, permanent, decisive, refusals);
            }
            SmtpReply data = checked(pipelining ? read(config.commandTimeout()) : command("DATA"));
            if (!mail.positive() || accepted.isEmpty() || data.code() != 354) {
                if (data.code() == 354) { // pipelined DATA accepted with no recipient: send an empty message (RFC 2920 3.1)
                    out.write(".\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    checked(read(config.dataTimeout()));
                }
                reset();
                if (!mail.positive()) {
                    return allRecipients(recipients, mail);
                }
                if (accepted.isEmpty()) {
                    return new TransactionResult(List.of(), temporary, permanent, decisive, refusals);
                }
                // DATA refused: the accepted recipients share its fate, the refused ones keep their own reply
                (data.permanent() ? permanent : temporary).addAll(accepted);
                return new TransactionResult(List.of(), temporary, permanent, data, refusals);
            }
            DotStuffingOutputStream body = new DotStuffingOutputStream(out);
            message.writeTo(body);
            body.finish();
            SmtpReply end = checked(read(config.dataTimeout()));
            if (!end.positive()) {
                (end.permanent() ? permanent : temporary).addAll(accepted);
                return new TransactionResult(List.of(), temporary, permanent, end, refusals);
            }
            return new TransactionResult(accepted, temporary, permanent, end, refusals);
        } catch (IOException | MessagingException e) {
            close();
            throw new SmtpFailure(SmtpReply.noReply(describe(e)), false, e);
        }
    }

    /** Whether the server's EHLO reply names {@code keyword} as an extension. */
    private static boolean offers(SmtpReply ehlo, String keyword) {
        for (String token : ehlo.text().split(" ")) {
            if (token.equalsIgnoreCase(keyword)) {
                return true;
            }
        }
        return false;
    }

    /** Whether this connection pipelines its commands (the server offered PIPELINING). */
    public boolean pipelining() {
        return pipelining;
    }

    /** Transactions run on this connection. */
    public int transactions() {
        return transactions;
    }

    public boolean isOpen() {
        return !socket.isClosed();
    }

    private SmtpReply checked(SmtpReply reply) throws SmtpFailure {
        if (reply.serviceNotAvailable()) {
            close();
            throw new SmtpFailure(reply, false, null);
        }
        return reply;
    }

    private void reset() throws IOException, SmtpFailure {
        SmtpReply rset = checked(command("RSET"));
        if (!rset.positive()) {
            close();
            throw new SmtpFailure(rset, false, null);
        }
    }

    private static TransactionResult allRecipients(List<MailAddress> recipients, SmtpReply reply) {
        return reply.permanent()
            ? new TransactionResult(List.of(), List.of(), List.copyOf(recipients), reply)
            : new TransactionResult(List.of(), List.copyOf(recipients), List.of(), reply);
    }

    private SmtpReply command(String line) throws IOException {
        write(line);
        out.flush();
        return read(config.commandTimeout());
    }

    private void write(String line) throws IOException {
        out.write((line + "\r\n").getBytes(StandardCharsets.US_ASCII));
    }

    /** Reads one (possibly multi-line) reply within {@code timeout}. */
    private SmtpReply read(Duration timeout) throws IOException {
        socket.setSoTimeout(timeout(timeout));
        StringBuilder text = new StringBuilder();
        while (true) {
            String line = readLine();
            if (line.length() < 3) {
                throw new IOException("malformed SMTP reply '" + line + "'");
            }
            int code;
            try {
                code = Integer.parseInt(line.substring(0, 3));
            } catch (NumberFormatException e) {
                throw new IOException("malformed SMTP reply '" + line + "'", e);
            }
            if (text.length() > 0) {
                text.append(' ');
            }
            text.append(line.length() > 4 ? line.substring(4) : "");
            if (line.length() == 3 || line.charAt(3) != '-') {
                return new SmtpReply(code, text.toString());
            }
        }
    }

    private String readLine() throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed by the server");
            }
            if (b == '\n') {
                int end = line.length();
                if (end > 0 && line.charAt(end - 1) == '\r') {
                    line.setLength(end - 1);
                }
                return line.toString();
            }
            if (line.length() > 4096) {
                throw new IOException("SMTP reply line longer than 4096 bytes");
            }
            line.append((char) b);
        }
    }

    @Override
    public void close() {
        if (socket.isClosed()) {
            return;
        }
        try {
            // QUIT and its 221 (1 s at most): the server has ended the session before this side opens
            // another connection to it, so it never sees more connections than the lane's limit.
            out.write("QUIT\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            read(Duration.ofSeconds(1));
        } catch (IOException e) {
            // closing anyway
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    private static int timeout(Duration duration) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, duration.toMillis()));
    }

    private static String describe(Exception e) {
        return (e instanceof SocketTimeoutException ? "timeout: " : "") + e.getClass().getSimpleName() + ": " + e.getMessage();
    }
}
