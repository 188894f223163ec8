package org.jameskvs.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jameskvs.testkit.james.JamesConf;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.Test;

/**
 * Two James 3.8.1 processes on one host, both left on the default node id (the host name, so the same
 * ownerName and namespace): the second refuses to start, naming the id, while the first keeps taking
 * mail.
 */
class SameNodeIdIT {

    @Test
    void aSecondJamesWithTheSameDefaultNodeIdRefusesToStart() throws Exception {
        Path directory = Scenario.runDirectory("same-node-id");
        List<KvsNode> nodes = new ArrayList<>();
        try (SmtpSink sink = SmtpSink.start(0, SmtpSink.DEFAULT_HEADER)) {
            for (int n = 1; n <= 3; n++) {
                nodes.add(KvsNode.start("kvs" + n, directory.resolve("kvs" + n)));
            }
            try (JamesNode first = JamesNode.start(directory.resolve("first"), sink.port(), nodes, SameNodeIdIT::defaultNodeId)) {
                String hostId = first.webadminCall("GET", "/kvs/cluster").body().replaceAll("(?s).*\"nodeId\":\"([^\"]+)\".*", "$1");
                assertThat(hostId).as("the default node id").isNotBlank().doesNotContain("{").isNotEqualTo("james");
                assertThatThrownBy(() -> JamesNode.start(directory.resolve("second"), sink.port(), nodes, SameNodeIdIT::defaultNodeId))
                    .hasMessageContaining("refusing to start")
                    .hasMessageContaining("nodeId=" + hostId)
                    .hasMessageContaining("ownerName=" + hostId)
                    .hasMessageContaining("namespace=" + hostId);
                assertThat(first.sendOne("<same-id-first@it.test>")).as("the first keeps taking mail").isEqualTo(250);
                assertThat(sink.awaitAll(List.of("<same-id-first@it.test>"), Scenario.DELIVERY_TIMEOUT)).isEmpty();
            }
        } finally {
            for (KvsNode node : nodes) {
                node.close();
            }
        }
    }

    /** Back to james-conf as shipped: no nodeId, so the host name. */
    private static void defaultNodeId(JamesConf conf) {
        conf.replace("kvs-spool.properties", "\nnodeId=james\n", "\n#nodeId=james-1\n");
    }
}
