package org.jameskvs.server;

import org.jameskvs.testkit.ChildProcess;
import org.jameskvs.testkit.KvsServerProcess;

import org.jameskvs.protocol.Opcode;
import org.jameskvs.protocol.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A sample or obvious password serves only on loopback; no password never; the shipped config has none. */
class ListenPasswordTest {
    @TempDir
    Path dir;

    private ServerConfig config(String host, String password) {
        Properties p = ServerConfig.testProperties(dir.resolve("data"), password);
        p.setProperty("listen.host", host);
        return ServerConfig.fromProperties(p);
    }

    private ServerConfig config(String host, String user, String password) {
        Properties p = ServerConfig.testProperties(dir.resolve("data"), password);
        p.setProperty("listen.host", host);
        p.setProperty("auth.user", user);
        return ServerConfig.fromProperties(p);
    }

    @Test
    void samplePasswordsAreRefusedOnANonLoopbackAddressNamingTheKey() {
        for (String sample : new String[]{"changeme", "password", "james", "Secret", " CHANGEME "}) {
            assertThatThrownBy(() -> config("0.0.0.0", sample)).as(sample)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("auth.password")
                    .hasMessageContaining("listen.host=0.0.0.0");
        }
    }

    /**
     * The user name as the password is refused on its own, not only because "james" (the default
     * user) is also a sample: gateway7 is in no list, and is refused only while it is the user name.
     */
    @Test
    void thePasswordEqualToTheUserNameIsRefusedOffLoopbackWhateverTheName() {
        for (String password : new String[]{"gateway7", "Gateway7", " GATEWAY7 "}) {
            assertThatThrownBy(() -> config("0.0.0.0", "gateway7", password)).as(password)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("auth.password")
                    .hasMessageContaining("listen.host=0.0.0.0");
        }
        assertThatCode(() -> config("127.0.0.1", "gateway7", "gateway7")).as("on loopback").doesNotThrowAnyException();
        assertThatCode(() -> config("0.0.0.0", "relay3", "gateway7")).as("another user's name")
                .doesNotThrowAnyException();
    }

    @Test
    void samplePasswordsAreAcceptedOnLoopbackOnly() {
        for (String host : new String[]{"127.0.0.1", "localhost", "::1", "127.0.0.2"}) {
            assertThatCode(() -> config(host, "changeme")).as(host).doesNotThrowAnyException();
        }
    }

    @Test
    void anOwnPasswordIsAcceptedAnywhere() {
        assertThatCode(() -> config("0.0.0.0", "Zt4p9-q8Lx2v")).doesNotThrowAnyException();
    }

    @Test
    void noPasswordIsRefusedEvenOnLoopback() {
        assertThatThrownBy(() -> config("127.0.0.1", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("auth.password");
    }

    @Test
    void theShippedConfigurationHoldsNoUsablePassword() {
        Path shipped = Path.of("..", "conf", "kvs-server.properties");
        assertThat(shipped).exists();
        assertThatThrownBy(() -> ServerConfig.load(shipped))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("auth.password");
    }

    @Test
    void aServerOnLoopbackStartsWithASamplePassword() throws Exception {
        try (KvsServer server = KvsServer.start(config("127.0.0.1", "changeme"));
             RawClient c = RawClient.authenticated(server.port(), "changeme")) {
            assertThat(c.simple(Opcode.PING, 0).status()).isEqualTo(Status.OK);
        }
    }

    @Test
    void theServerProcessRefusesToStartWithASamplePasswordOnAllAddresses() throws Exception {
        KvsServerProcess server = KvsServerProcess.in(dir).listenHost("0.0.0.0").password("changeme").fromClassPath().create();
        try (ChildProcess p = server.launch()) {
            assertThat(p.process().waitFor(60, TimeUnit.SECONDS)).as("the server exits").isTrue();
            String output = p.logText();
            assertThat(p.process().exitValue()).as(output).isEqualTo(2);
            assertThat(output).contains("configuration refused: auth.password");
        }
    }
}
