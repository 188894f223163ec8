package org.jameskvs.app.e2e;

import org.jameskvs.testkit.james.JamesProcess;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.jameskvs.testkit.smtp.SmtpClient;
import org.jameskvs.testkit.smtp.SmtpLoadSender;
import org.jameskvs.testkit.smtp.SmtpSink;
import org.junit.jupiter.api.Test;

/**
 * End to end with two copies: two real KVS server processes named in the replication block of
 * james-conf/kvs-spool.properties, James 3.8.1 with the plug-in, the sink. Every mail answered 250
 * must reach the sink exactly once, also when one KVS node is stopped and started again meanwhile.
 * While it is down every mail is refused with a 4xx: with two nodes there is no second copy to be
 * had, and a 250 means two copies. Once it is back mail is accepted again without restarting James.
 */
class ReplicatedKvsSpoolE2ETest {
    private static final String RECIPIENT = "rcpt@sink.test";

    @Test
    void everyAcceptedMailIsRelayedOnceWhileOneNodeStopsAndComesBack() throws Exception {
        try (ReplicatedJames rig = ReplicatedJames.start("replicated", conf -> conf.kvsRequestTimeoutMillis(5_000))) {
            SmtpSink sink = rig.sink;
            JamesProcess james = rig.james;

            SmtpLoadSender.Result sent = new SmtpLoadSender("127.0.0.1", james.smtpPort(), 60_000)
                .send(100, 4, RECIPIENT, "e2e-two-copies");
            assertThat(sent.accepted()).as(sent.summary()).isEqualTo(100);
            List<String> accepted = new ArrayList<>(
                IntStream.range(0, 100).mapToObj(i -> SmtpLoadSender.messageId("e2e-two-copies", i)).toList());
            assertThat(sink.awaitAll(accepted, Duration.ofSeconds(120))).as(james.logTail(40)).isEmpty();
            assertThat(james.logText()).as("the replication layer is the one in use").contains("replication: connected to node2");

            rig.node2.stop();
            List<String> refused = new ArrayList<>();
            long downAt = System.nanoTime();
            sendOneByOne(james, "e2e-node2-down", 30, accepted, refused);
            System.out.printf("node 2 down: %d of 30 refused (4xx) in %d ms%n", refused.size(),
                (System.nanoTime() - downAt) / 1_000_000);
            assertThat(refused).as("with node 2 down (accepted: %s)", accepted.stream().filter(id -> id.contains("e2e-node2-down-")).toList())
                .hasSize(30);
            rig.node2.startAgain();
            // The replication layer sees the node again after its heartbeats (and rebuilds the copy):
            // retry one mail at a time, bounded, until one is accepted; then a batch.
            Instant deadline = Instant.now().plusSeconds(90);
            int retry = 0;
            boolean acceptedAgain = false;
            while (!acceptedAgain && Instant.now().isBefore(deadline)) {
                int before = accepted.size();
                sendOneByOne(james, "e2e-node2-retry" + retry++, 1, accepted, refused);
                acceptedAgain = accepted.size() > before;
                Thread.sleep(acceptedAgain ? 0 : 500);
            }
            assertThat(acceptedAgain).as("no mail accepted within 90 s of node 2's restart\n%s", james.logTail(60)).isTrue();
            sendOneByOne(james, "e2e-node2-back", 30, accepted, refused);
            assertThat(accepted.stream().filter(id -> id.contains("e2e-node2-back-")).count())
                .as("once node 2 is back, mail is accepted again (refused: %s)", refused).isEqualTo(30);

            List<String> missing = sink.awaitAll(accepted, Duration.ofSeconds(120));
            assertThat(missing).as("accepted (250) but never delivered: %s\n%s", sink.statsLine(), james.logTail(60)).isEmpty();
            Thread.sleep(2_000);
            assertThat(accepted).allSatisfy(id -> assertThat(sink.count(id)).as("deliveries of %s", id).isEqualTo(1));
            assertThat(sink.duplicates()).as(sink.statsLine()).isZero();
        }
    }

    /** Sends {@code count} mails; a 250 goes to {@code accepted}, a 4xx to {@code refused}; anything else fails. */
    private static void sendOneByOne(JamesProcess james, String prefix, int count, List<String> accepted,
                                     List<String> refused) throws IOException {
        try (SmtpClient client = SmtpClient.connect("127.0.0.1", james.smtpPort(), 60_000)) {
            for (int i = 0; i < count; i++) {
                String id = SmtpLoadSender.messageId(prefix, i);
                int code = client.send(SmtpLoadSender.FROM, RECIPIENT, SmtpClient.message(SmtpLoadSender.FROM, RECIPIENT, id, prefix));
                if (code == 250) {
                    accepted.add(id);
                } else {
                    assertThat(code).as("reply for %s: a refusal must be temporary", id).isBetween(400, 499);
                    refused.add(id);
                }
            }
        }
    }
}
