package org.jameskvs.delivery.target;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The target answers each domain on its own loopback address with that domain's behaviour. */
class DomainSmtpTargetTest {

    @Test
    void eachDomainHasItsAddressAndBehaviour() throws Exception {
        Map<String, Behaviour> behaviours = new LinkedHashMap<>();
        behaviours.put("ok.test", Behaviour.accept());
        behaviours.put("busy.test", Behaviour.refuse421());
        behaviours.put("two.test", Behaviour.maxConnections(2));
        try (DomainSmtpTarget target = DomainSmtpTarget.start(behaviours)) {
            assertThat(target.domain("ok.test").address().getHostAddress()).isEqualTo("127.0.0.2");
            assertThat(target.domain("busy.test").address().getHostAddress()).isEqualTo("127.0.0.3");
            assertThat(greeting(target, "ok.test")).startsWith("220 ");
            assertThat(greeting(target, "busy.test")).startsWith("421 ");

            try (Socket first = open(target, "two.test"); Socket second = open(target, "two.test")) {
                assertThat(read(first)).startsWith("220 ");
                assertThat(read(second)).startsWith("220 ");
                assertThat(greeting(target, "two.test")).startsWith("421 ");
            }
            assertThat(target.domain("two.test").maxConcurrentConnections()).isEqualTo(3);
            assertThat(target.domain("two.test").refused()).isEqualTo(1);

            try (Socket socket = open(target, "ok.test")) {
                BufferedReader in = reader(socket);
                OutputStream out = socket.getOutputStream();
                assertThat(in.readLine()).startsWith("220");
                for (String line : new String[] {"EHLO me", "MAIL FROM:<a@b.test>", "RCPT TO:<c@ok.test>", "DATA"}) {
                    send(out, line);
                    String reply = in.readLine();
                    while (reply.charAt(3) == '-') {
                        reply = in.readLine();
                    }
                    assertThat(reply).matches("(250|354).*");
                }
                send(out, "Message-ID: <one@x.test>\r\n\r\n..dot\r\n.");
                assertThat(in.readLine()).startsWith("250");
            }
            assertThat(target.domain("ok.test").accepted()).isEqualTo(1);
            assertThat(target.domain("ok.test").messageIds()).containsExactly("<one@x.test>");
            assertThat(target.domain("busy.test").accepted()).isZero();
        }
    }

    private static String greeting(DomainSmtpTarget target, String domain) throws Exception {
        try (Socket socket = open(target, domain)) {
            return read(socket);
        }
    }

    private static Socket open(DomainSmtpTarget target, String domain) throws Exception {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(target.domain(domain).address(), target.port()), 5_000);
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static String read(Socket socket) throws Exception {
        return reader(socket).readLine();
    }

    private static BufferedReader reader(Socket socket) throws Exception {
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
    }

    private static void send(OutputStream out, String line) throws Exception {
        out.write((line + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }
}
