package org.jameskvs.spoolbench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One SMTP session of the load generator: a persistent connection on which mails are sent one after
 * the other (no pipelining). {@link #send} returns the final reply code; its response time, taken by
 * the caller, spans the whole mail transaction: MAIL FROM, RCPT TO, DATA, the message, up to the
 * reply to the final dot (the point where the server has taken responsibility for the mail).
 */
final class BenchSmtpSession implements AutoCloseable {
    private static final byte[] MAIL = ("MAIL FROM:<" + MailMix.FROM + ">\r\n").getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] RCPT = ("RCPT TO:<" + MailMix.TO + ">\r\n").getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] DATA = "DATA\r\n".getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] END = ".\r\n".getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] RSET = "RSET\r\n".getBytes(StandardCharsets.ISO_8859_1);

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final StringBuilder line = new StringBuilder(128);

    private BenchSmtpSession(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream(), 8192);
        this.out = new BufferedOutputStream(socket.getOutputStream(), 16 * 1024);
    }

    static BenchSmtpSession open(String host, int port, int timeoutMillis) throws IOException {
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            BenchSmtpSession session = new BenchSmtpSession(socket);
            expect(session.reply(), 220, "greeting");
            session.out.write("EHLO bench.kvs-load.test\r\n".getBytes(StandardCharsets.ISO_8859_1));
            session.out.flush();
            expect(session.reply(), 250, "EHLO");
            return session;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Sends one mail; 250 when accepted, otherwise the first failing reply (the transaction is reset). */
    int send(byte[] headers, byte[] body) throws IOException {
        int code = command(MAIL);
        if (code != 250) {
            return reset(code);
        }
        code = command(RCPT);
        if (code != 250 && code != 251) {
            return reset(code);
        }
        code = command(DATA);
        if (code != 354) {
            return reset(code);
        }
        out.write(headers);
        out.write(body);
        out.write(END);
        out.flush();
        return reply();
    }

    private int reset(int code) throws IOException {
        command(RSET);
        return code;
    }

    private int command(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return reply();
    }

    /** Reads a possibly multi-line reply; returns its code. */
    private int reply() throws IOException {
        while (true) {
            line.setLength(0);
            int c;
            while ((c = in.read()) != '\n') {
                if (c < 0) {
                    throw new IOException("connection closed by server");
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            if (line.length() < 3) {
                throw new IOException("bad SMTP reply: " + line);
            }
            if (line.length() > 3 && line.charAt(3) == '-') {
                continue;
            }
            return Integer.parseInt(line.substring(0, 3));
        }
    }

    private static void expect(int code, int expected, String step) throws IOException {
        if (code != expected) {
            throw new IOException(step + " answered " + code);
        }
    }

    @Override
    public void close() {
        try {
            if (!socket.isClosed()) {
                out.write("QUIT\r\n".getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                socket.setSoTimeout(2000);
                reply();
            }
        } catch (IOException | RuntimeException ignored) {
            // closing anyway
        } finally {
            try {
                socket.close();
            } catch (IOException ignored) {
                // best effort
            }
        }
    }
}
