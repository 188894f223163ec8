package org.jameskvs.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.jameskvs.client.KvsClient;
import org.jameskvs.client.KvsClientConfig;
import org.jameskvs.client.KvsException;
import org.jameskvs.protocol.ProtocolVersion;
import org.jameskvs.protocol.RequestDescriptor;
import org.jameskvs.protocol.Requests;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A client of another protocol version against a real server: both sides name both versions. */
class ProtocolVersionTest {
    private static final String PASSWORD = "version-secret";
    private static final byte OTHER = (byte) (ProtocolVersion.CURRENT + 1);
    private static final String MISMATCH = "server speaks protocol version " + ProtocolVersion.CURRENT
            + ", client sent " + OTHER;

    @RegisterExtension
    final ServerOnDisk server = new ServerOnDisk(PASSWORD);

    @Test
    void theServerAnswersBadFrameNamingBothVersionsAndCloses() throws Exception {
        ByteBuf auth = Unpooled.buffer();
        Requests.auth(auth, 1, "james", PASSWORD);
        auth.setByte(RequestDescriptor.LENGTH_FIELD_SIZE + RequestDescriptor.VERSION_OFFSET, OTHER);
        try (RawClient c = new RawClient(server.port())) {
            c.sendRaw(ByteBufUtil.getBytes(auth));
            RawClient.Response r = c.receive();
            assertThat(r.status()).isEqualTo(Status.BAD_FRAME);
            assertThat(r.reason()).isEqualTo(MISMATCH);
            assertThat(c.closedByServer()).isTrue();
        }
        // Only that connection was ended.
        try (RawClient c = RawClient.authenticated(server.port(), PASSWORD)) {
            assertThat(c.simple(org.jameskvs.protocol.Opcode.PING, 0).status()).isEqualTo(Status.OK);
        }
    }

    @Test
    void theClientLibrarySurfacesTheServersReasonWithBothVersions() throws Exception {
        try (VersionChangingProxy proxy = new VersionChangingProxy(server.port(), OTHER)) {
            KvsClientConfig config = KvsClientConfig.builder().host("127.0.0.1").port(proxy.port())
                    .credentials("james", PASSWORD).connectTimeout(Duration.ofSeconds(5))
                    .requestTimeout(Duration.ofSeconds(10)).build();
            assertThatThrownBy(() -> KvsClient.connect(config).close())
                    .isInstanceOf(KvsException.class)
                    .hasMessageContaining(MISMATCH)
                    .satisfies(e -> assertThat(((KvsException) e).status()).isEqualTo(Status.CONNECTION_LOST));
        }
    }
}
