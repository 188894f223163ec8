package org.jameskvs.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.protocol.Frames;
import org.jameskvs.protocol.ProtocolVersion;
import org.jameskvs.protocol.ResponseDescriptor;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A server of another protocol version: it answers the client's AUTH as such a server answers lost
 * framing, BAD_FRAME in a frame of its own version. The client cannot read that frame and says why,
 * naming both versions.
 */
class ProtocolVersionTest {
    private static final byte OTHER = (byte) (ProtocolVersion.CURRENT + 1);

    @Test
    void aResponseOfAnotherVersionFailsTheConnectNamingBothVersions() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread server = new Thread(() -> answerFirstFrameAsOtherVersion(listener), "other-version-server");
            server.setDaemon(true);
            server.start();
            KvsClientConfig config = KvsClientConfig.builder().host("127.0.0.1").port(listener.getLocalPort())
                    .credentials("u", "p").connectTimeout(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(10))
                    .build();
            assertThatThrownBy(() -> KvsClient.connect(config).close())
                    .isInstanceOf(KvsException.class)
                    .hasMessageContaining("client speaks protocol version " + ProtocolVersion.CURRENT + ", server sent " + OTHER)
                    .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(Status.CONNECTION_LOST));
            server.join(10_000);
        }
    }

    private static void answerFirstFrameAsOtherVersion(ServerSocket listener) {
        try (Socket s = listener.accept()) {
            s.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            in.readFully(new byte[in.readInt()]);
            ByteBuf answer = Unpooled.buffer();
            Frames.writeError(answer, (byte) 0, Status.BAD_FRAME, 0, 0, "server speaks protocol version " + OTHER);
            answer.setByte(ResponseDescriptor.LENGTH_FIELD_SIZE + ResponseDescriptor.VERSION_OFFSET, OTHER);
            s.getOutputStream().write(ByteBufUtil.getBytes(answer));
            s.getOutputStream().flush();
            // Wait for the client to hang up, as a server that has answered would.
            while (s.getInputStream().read() >= 0) {
                // drain
            }
        } catch (IOException e) {
            // the client closed first: fine
        }
    }
}
