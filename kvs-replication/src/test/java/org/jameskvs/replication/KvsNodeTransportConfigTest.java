package org.jameskvs.replication;

import org.jameskvs.client.ClientTls;
import org.jameskvs.client.KvsClientConfig;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings of the replication's node connections. What matters most here cannot be seen from
 * outside in most runs: a handle whose first OPEN named no store (a new queue's members, a rebuild
 * target) is re-opened by the client after a reconnect, and only the client's
 * {@code reopenOnSameStoreOnly} keeps it from landing silently on a node's new, empty store (the
 * state machine's own OPENs name the store, so a test through a whole cluster usually takes that
 * route instead: {@code WipedNodeTest} passes either way). The client's side of it is
 * {@code ReconnectTest}'s.
 */
class KvsNodeTransportConfigTest {
    private final ReplicationConfig config = ReplicationConfig.of(List.of(
                    new ReplicationConfig.NodeSpec("kvs1", "10.0.0.1", 7401, "10.1.0.1", 7411),
                    new ReplicationConfig.NodeSpec("kvs2", "10.0.0.2", 7402, "10.1.0.2", 7412)), "james", "secret")
            .withTimings(Duration.ofMillis(200), Duration.ofMillis(600), Duration.ofMillis(1000));

    @Test
    void everyPathReopensOnlyOnTheStoreThatFirstAnsweredIt() {
        for (ReplicationConfig.NodeSpec n : config.nodes()) {
            for (NodePath p : NodePath.values()) {
                KvsClientConfig cc = KvsNodeTransport.clientConfig(config, n, p, ClientTls.OFF, null);
                assertThat(cc.reopenOnSameStoreOnly()).as(n.name() + "/" + p).isTrue();
            }
        }
    }

    @Test
    void eachPathGoesToItsOwnAddressWithTheNodesCredentialsAndTls() {
        ClientTls tls = ClientTls.trusting(Path.of("ca.pem"));
        ReplicationConfig.NodeSpec kvs2 = config.nodes().get(1);
        KvsClientConfig active = KvsNodeTransport.clientConfig(config, kvs2, NodePath.ACTIVE, tls, null);
        KvsClientConfig standby = KvsNodeTransport.clientConfig(config, kvs2, NodePath.STANDBY, tls, null);
        assertThat(active.host() + ":" + active.port()).isEqualTo("10.0.0.2:7402");
        assertThat(standby.host() + ":" + standby.port()).isEqualTo("10.1.0.2:7412");
        assertThat(active.user() + "/" + active.password()).isEqualTo("james/secret");
        assertThat(active.tls()).isEqualTo(tls);
        assertThat(standby.tls()).isEqualTo(tls);
        // the state machine times requests out itself; the client's own timeout is a backstop behind it
        assertThat(active.requestTimeout()).isEqualTo(Duration.ofMillis(3000));
    }
}
