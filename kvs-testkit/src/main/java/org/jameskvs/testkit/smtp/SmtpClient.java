package org.jameskvs.testkit.smtp;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain SMTP client over one connection that reports the server's reply code for every message, so
 * callers can tell 250 from 4xx/5xx. Several messages may be sent on one connection.
 */
public final class SmtpClient implements AutoCloseable {
    private final Socket socket;
    private final BufferedReader in;
    private final OutputStream out;
    private List<String> lastReply = List.of();
    /** The step of the last transaction whose reply {@link #send}/{@link #sendOfSize} returned, and that reply. */
    private String finalStep = "";
    private List<String> finalReply = List.of();
    private List<String> ehlo = List.of();

    private SmtpClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
        this.out = socket.getOutputStream();
    }

    /** Connects, reads the greeting and says EHLO. Every read times out after {@code timeoutMillis}. */
    public static SmtpClient connect(String host, int port, int timeoutMillis) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            SmtpClient client = new SmtpClient(socket);
            client.expect(client.readReply(), 220, "greeting");
            client.expect(client.command("EHLO kvs-load-sender.test"), 250, "EHLO");
            client.ehlo = client.lastReply;
            return client;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /**
     * Sends one message; returns the final reply code: that of DATA's end (250 when the server took
     * responsibility), or the first non-success reply of MAIL/RCPT/DATA (the transaction is then reset).
     */
    public int send(String from, String to, String message) throws IOException {
        int refused = openData("MAIL FROM:<" + from + ">", to);
        if (refused != 0) {
            return refused;
        }
        StringBuilder data = new StringBuilder(message.length() + 64);
        for (String line : message.split("\r?\n", -1)) {
            data.append(line.startsWith(".") ? "." : "").append(line).append("\r\n");
        }
        data.append(".\r\n");
        out.write(data.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return endOfData();
    }

    /** The lines of the server's answer to EHLO (e.g. "250-SIZE 66060288"). */
    public List<String> ehloReply() {
        return ehlo;
    }

    /** The lines of the last reply read (e.g. the text of a refusal). */
    public List<String> lastReply() {
        return lastReply;
    }

    /**
     * Sends one message with about {@code bodyBytes} bytes of text (whole 76-character lines) after its headers,
     * written as it goes (nothing of that size is built in memory); with {@code declareSize} MAIL FROM
     * carries {@code SIZE=} (RFC 1870) with the message's exact size. Returns the final reply code,
     * as {@link #send} does.
     */
    public int sendOfSize(String from, String to, String messageId, long bodyBytes, boolean declareSize) throws IOException {
        byte[] headers = message(from, to, messageId, "of " + bodyBytes + " bytes").split("\r\n\r\n")[0]
            .concat("\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        byte[] line = ("x".repeat(74) + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
        long lines = Math.max(1, bodyBytes / line.length);
        int refused = openData("MAIL FROM:<" + from + ">" + (declareSize ? " SIZE=" + (headers.length + lines * line.length) : ""), to);
        if (refused != 0) {
            return refused;
        }
        OutputStream buffered = new BufferedOutputStream(out, 1 << 16);
        buffered.write(headers);
        for (long i = 0; i < lines; i++) {
            buffered.write(line);
        }
        buffered.write(".\r\n".getBytes(StandardCharsets.ISO_8859_1));
        buffered.flush();
        return endOfData();
    }

    private int endOfData() throws IOException {
        int code = readReply();
        finalStep = "end of DATA";
        finalReply = lastReply;
        return code;
    }

    /**
     * Where the last {@link #send}/{@link #sendOfSize} got the reply it returned: "MAIL", "RCPT", "DATA"
     * (a refusal before the message was sent) or "end of DATA"; and that reply's lines.
     */
    public String finalStep() {
        return finalStep;
    }

    /** The lines of the reply {@link #finalStep()} names (after a refusal, {@link #lastReply()} is RSET's). */
    public List<String> finalReply() {
        return finalReply;
    }

    /** A message with the given Message-ID and a small text body. */
    public static String message(String from, String to, String messageId, String subject) {
        return "From: <" + from + ">\r\n"
            + "To: <" + to + ">\r\n"
            + "Subject: " + subject + "\r\n"
            + "Message-ID: " + messageId + "\r\n"
            + "MIME-Version: 1.0\r\n"
            + "Content-Type: text/plain; charset=us-ascii\r\n"
            + "\r\n"
            + "Sent by the James KVS spool test sender.\r\n"
            + "Message " + messageId + ".";
    }

    /**
     * The envelope: {@code mailFrom} (the MAIL command), RCPT TO, DATA. Returns 0 when the server
     * waits for the message (354), else the code of the first non-success reply (the transaction is
     * then reset).
     */
    private int openData(String mailFrom, String to) throws IOException {
        int code = command(mailFrom);
        if (code != 250) {
            return reset("MAIL", code);
        }
        code = command("RCPT TO:<" + to + ">");
        if (code != 250 && code != 251) {
            return reset("RCPT", code);
        }
        code = command("DATA");
        if (code != 354) {
            return reset("DATA", code);
        }
        return 0;
    }

    private int reset(String step, int code) throws IOException {
        finalStep = step;
        finalReply = lastReply;
        command("RSET");
        return code;
    }

    private int command(String line) throws IOException {
        out.write((line + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return readReply();
    }

    /** Reads a (possibly multi-line) reply and returns its code. */
    private int readReply() throws IOException {
        List<String> lines = new ArrayList<>();
        String line;
        do {
            line = in.readLine();
            if (line == null) {
                throw new IOException("connection closed by server");
            }
            lines.add(line);
        } while (line.length() > 3 && line.charAt(3) == '-');
        lastReply = List.copyOf(lines);
        if (line.length() < 3) {
            throw new IOException("bad SMTP reply: " + line);
        }
        return Integer.parseInt(line.substring(0, 3));
    }

    private void expect(int code, int expected, String step) throws IOException {
        if (code != expected) {
            throw new IOException(step + " answered " + code);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            if (!socket.isClosed()) {
                command("QUIT");
            }
        } catch (IOException ignored) {
            // closing anyway
        } finally {
            socket.close();
        }
    }
}
