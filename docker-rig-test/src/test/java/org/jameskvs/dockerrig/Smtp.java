package org.jameskvs.dockerrig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A minimal SMTP client: one message per connection, fails on any unexpected reply. */
final class Smtp {
    private Smtp() {
    }

    static void send(String host, int port, String from, String to, String subject, String messageId) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 10_000);
            socket.setSoTimeout(60_000);
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            OutputStream out = socket.getOutputStream();
            expect(in, "220", "greeting");
            command(out, in, "EHLO docker-rig-test", "250");
            command(out, in, "MAIL FROM:<" + from + ">", "250");
            command(out, in, "RCPT TO:<" + to + ">", "250");
            command(out, in, "DATA", "354");
            String message = "From: <" + from + ">\r\n"
                + "To: <" + to + ">\r\n"
                + "Subject: " + subject + "\r\n"
                + "Message-ID: <" + messageId + ">\r\n"
                + "\r\n"
                + "Sent by docker-rig-test through James and the KVS spool.\r\n"
                + ".\r\n";
            out.write(message.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            expect(in, "250", "end of DATA");
            command(out, in, "QUIT", "221");
        }
    }

    private static void command(OutputStream out, BufferedReader in, String line, String code) throws IOException {
        out.write((line + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        expect(in, code, line);
    }

    /** Reads a (possibly multi-line) reply and checks its code. */
    private static void expect(BufferedReader in, String code, String after) throws IOException {
        String line;
        do {
            line = in.readLine();
            if (line == null) {
                throw new IOException("connection closed, expecting " + code + " after " + after);
            }
        } while (line.length() > 3 && line.charAt(3) == '-');
        if (!line.startsWith(code)) {
            throw new IOException("expected " + code + " after " + after + ", got: " + line);
        }
    }
}
